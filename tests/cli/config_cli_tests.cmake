# Command-line tests of input errors (config module).
