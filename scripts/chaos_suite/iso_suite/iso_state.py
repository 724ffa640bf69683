"""A process-wide global, as a library's init_process_group keeps one."""

initialised = False
