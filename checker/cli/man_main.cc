// Writes the man page qpcheck(1) to stdout (build-time tool of //checker/cli:man).
#include <iostream>

#include "checker/cli/app.h"
#include "checker/cli/man.h"

int main() {
  qpcheck::cli::Commands commands;
  std::unique_ptr<CLI::App> app = qpcheck::cli::make_app(commands);
  std::cout << qpcheck::cli::man_page(*app);
  return std::cout.good() ? 0 : 1;
}
