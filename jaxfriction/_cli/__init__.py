"""The ``jaxfriction`` command, one module per subcommand (:mod:`jaxfriction.cli` is the entry point)."""
