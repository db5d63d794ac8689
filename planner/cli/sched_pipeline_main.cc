// The sched-pipeline program: PipeEdge's scheduler command line over pe's exact search.
#include <iostream>

#include "sched_pipeline_cli.h"

int main(int argc, char** argv) {
  return pe::sched_pipeline_main(argc, argv, std::cout, std::cerr);
}
