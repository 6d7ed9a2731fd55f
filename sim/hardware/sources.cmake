# Sources of the hardware module.
