# Tests of the plan module.
