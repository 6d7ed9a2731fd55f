#pragma once
// trainsim's version (CMakeLists.txt's project(VERSION)), printed by --version and written
// into every JSON output so a file says which model produced it.

namespace trainsim {

const char* version();

}  // namespace trainsim
