// clef_man_pages DIR PAGE…: the build's man-page writer (see write_man_pages in run.hpp). Not
// installed; the pages it writes are.
#include <iostream>
#include <string>
#include <vector>

#include "run.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: clef_man_pages DIR PAGE...\n";
    return 2;
  }
  const std::vector<std::string> pages(argv + 2, argv + argc);
  return clef::cli::write_man_pages(argv[1], pages, std::cerr);
}
