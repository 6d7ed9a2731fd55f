# Tests of the schedule module.
