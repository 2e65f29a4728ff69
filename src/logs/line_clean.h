// One log line as a user pasted it, reduced to what the program printed.
//
// Removed, in any order and nesting: ANSI colour codes (also their remains
// "[0m" when the escape byte was lost in a copy), NUL and other control
// bytes, invalid UTF-8 (replaced by U+FFFD), and the prefixes launchers and
// log collectors put in front:
//   Open MPI --tag-output   "[1,3]<stdout>:"  "[1,3]<stderr>:"
//   Slurm srun --label      "3: "
//   torchrun / PyTorch      "[rank3]:"  "[default3]:"  "[trainer3]:"  "[trainer0|0]:"
//   Ray                     "(RayTrainWorker pid=123, ip=10.0.0.5) " and the
//                           suffix " [repeated 7x across cluster]"
//   kubectl logs --prefix   "[pod/trainer-0/pytorch] "
//   pdsh / clush            "node-a: " before "node-a:pid:tid ..."
//   timestamps              "2024-11-28T07:42:11.525Z", "[2026-11-02 09:14:03]",
//                           "2025-02-16 22:31:34,422", CloudWatch's "| ... |"
#pragma once

#include <string>
#include <string_view>

namespace fabcheck::logs {

struct CleanLine {
  std::string_view text;       // the program's own line (points into the input or the scratch)
  int launcher_rank = -1;      // from "[1,N]<stdout>:", "N: ", "[rankN]:", "[defaultN]:"
  int repeated = 1;            // Ray's "[repeated Nx across cluster]"
  std::string_view ray_ip;     // Ray's "ip=..." (points into the input or the scratch)
  std::string_view pod;        // kubectl's "[pod/NAME/...]"
  bool had_binary = false;     // NUL, control bytes or invalid UTF-8 were removed
};

// `scratch` holds the text when bytes had to be removed; it must outlive the result.
CleanLine Clean(std::string_view raw, std::string* scratch);

}  // namespace fabcheck::logs
