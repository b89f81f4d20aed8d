"""Where the work of an audit runs: in this process, in a pool of processes, or on a Dask cluster.

:mod:`.executors` holds the one execution layer (``open_executor``); results never depend on the
executor. Who may import it: the black-box audit, the CLI and the pytest plugin. It imports nothing
of the engine (a Dask worker's preloaded modules are named by the caller).
"""
