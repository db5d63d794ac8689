// The sched-pipeline program: PipeEdge's scheduler command line over pe's exact search.
#include <iostream>

#include "sched_pipeline_cli.h"
#include "standard_output.h"

int main(int argc, char** argv) {
  const int status = pe::sched_pipeline_main(argc, argv, std::cout, std::cerr);
  return pe::cli::finish_standard_output(status, "sched-pipeline");
}
