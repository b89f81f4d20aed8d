"""pytest plugin for users' own CI (entry point ``pytest11``); see ``assert_dp``."""
