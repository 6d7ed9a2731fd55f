#pragma once
// A one-line progress bar on stderr, redrawn in place, for commands that replay many steps.
// The caller draws it only when stderr is a terminal (isatty), so that a log or a test's
// captured output stays free of it.
#include <cstddef>
#include <cstdio>
#include <string>

inline void draw_progress(std::size_t done, std::size_t total) {
  constexpr int kWidth = 30;
  const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(filled, '#').c_str(), std::string(kWidth - filled, ' ').c_str(),
               done, total);
  if (done == total) std::fputs("\n", stderr);
  std::fflush(stderr);
}
