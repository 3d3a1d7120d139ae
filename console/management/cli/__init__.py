"""The sub-commands of ``manage.py kafka``, one module per area (``topics``, ``clusters``, ``configs``,
``groups``, ``acls``, ``reassign``, ``elections``, ``requests``, ``audit``).

Each module has ``add_parsers(area)`` (the sub-command's options, named as in Kafka's own tool) and a
``Commands`` mixin whose ``_<area>_<action>`` methods call the same area actions as the pages and the
API. The ``kafka`` command lists the modules in ``CLI_MODULES`` (one line per area). ``base`` holds
the exit codes, the common options, the change-control choices and the output (table, JSON, CSV).
"""
