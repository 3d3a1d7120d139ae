"""The sub-commands of ``manage.py kafka``, one module per area (``topics``, ``configs``, ``acls``,
``reassign``, ``elections``, ``requests``, ``audit``; consumer groups live in console/groups/command.py).

Each module has ``add_parsers(area)`` (the sub-command's options, named as in Kafka's own tool) and a
mixin class whose ``_<area>_<action>`` methods call the same area actions as the pages and the API.
``base`` holds the exit codes, the common options and the output (table, JSON, CSV).
"""
