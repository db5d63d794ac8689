#include "options.h"

namespace pe::cli {

std::string help_text() {
  return R"(Usage: pe-plan [OPTION]...
       pe-plan sched-pipeline [OPTION]...   (PipeEdge-compatible scheduler; -h for its options)

Plans hybrid data/pipeline parallel training: for every global batch size (GBS) it prints
plain data-parallel speedups and the fastest pipeline plan (stage cuts, devices per stage,
micro-batches, schedule). With no options it plans the bundled ResNet-50 profile for
GBS 32:4096:64 on 16 GPUs as 2 machines x 8.

Model:
  --profile NAME|PATH   bundled profile name (see profiles/README.md) or a PipeDream/HPGO
                        graph.txt file (default resnet50)
  --pbs N               batch size the profile was taken at (default: from the catalogue or
                        a '-pbs-N' file name; required for other files); 0.001 to 2^30
  --mbs N               smallest micro-batch size (default: catalogue, else 1)
  --optimizer-scaling X weight memory multiplier for weights+gradients+optimizer state
                        (default: catalogue; 2 for SGD-momentum, 3 for Adam-like); 1 to 1e6
  --activation-bytes-per-sample B
                        activation memory one sample needs for the whole model
                        (default: catalogue, else the profile's total); 0 to 1e18
Cluster:
  --devices ENDS        cumulative GPU ids where machines end: 8,16 = 2 machines x 8 GPUs,
                        1,2,...,16 = 16 single-GPU machines (default 8,16)
  --cluster FILE        cluster YAML (machines, bandwidths, memory); see README
  --intra-bw GBPS       bandwidth between GPUs of a machine, GB/s (default 25)
  --inter-bw GBPS       all-reduce bandwidth between machines, GB/s (default 3)
  --inter-p2p-bw GBPS   point-to-point bandwidth between machines, GB/s (default 1, or
                        --inter-bw when only that is given)
  --memory-gb GB        memory per GPU, GB = 1e9 bytes (default 16)
Search:
  --gbs LIST            global batch sizes: N, N,M,... or FIRST:LAST:STEP, which means
                        FIRST then every multiple of STEP up to LAST (default 32:4096:64)
  --schedule S          1f1b, gpipe or best (default best)
  --top K               also list the K best plans of distinct shapes (default 1)
  --search-effort N     steps of the exact search per batch size (default 1e8, about
                        1-5 s in the worst cases; 0 = unlimited). When a batch size needs
                        more, the best plan found is shown, marked '~' (CSV/JSON: exact
                        false); it is never worse than data parallelism
Output:
  --format F            table, csv or json (default table)
  --plan-gbs N          the batch size whose plan is explained below the table and used
                        by --trace, --svg, --fill and --export-sched (default: the last
                        one of --gbs)
  --trace FILE          write that plan's timeline as Chrome trace JSON (Perfetto)
  --svg FILE            write that plan's timeline as an SVG Gantt chart
  --plot FILE           write speedup vs GBS of the sweep as an SVG chart
  --fill FILE           place the extra work described in FILE into the plan's bubbles
  --export-sched FILE   write that plan as a PipeEdge schedule YAML (needs --hosts)
  --hosts H1,H2,...     one host name per device of the plan, in stage order
  -h, --help            this text;  --version  the version

Environment: TBB_NUM_THREADS caps worker threads (results do not depend on it);
PE_PROFILES_DIR overrides where bundled profiles are found.
Exit codes: 0 success (including "no plan fits"), 1 bad input file, 2 bad usage.
)";
}

}  // namespace pe::cli
