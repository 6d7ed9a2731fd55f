# Command-line tests of run / memory / trace output (engine and report modules).
