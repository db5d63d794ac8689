// pe-plan: the command line over the pe library.
#include <iostream>

int main() {
  std::cerr << "pe-plan: under construction\n";
  return 2;
}
