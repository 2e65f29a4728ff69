// What kind of text a file holds, from its first bytes: a log (NCCL,
// PyTorch, a launcher's output) or a JSON document. Content decides, not the
// first character: launchers and collectors put brackets in front of every
// line ("[1,0]<stdout>:", "[rank0]:", "[default0]:", "[pod/x/c] ",
// "[2026-11-02 09:14:03]", NCCL 2.5's " [0] NCCL INFO"), so a leading '['
// proves nothing; an NCCL or framework line anywhere in the first KiB does.
#pragma once

#include <string_view>

namespace fabcheck::logs {

enum class TextKind {
  kLog,      // NCCL / framework lines seen, or text that is not JSON
  kJson,     // an object, or an array start that holds no log line in its first KiB
  kUnknown,  // empty
};

// `head`: the first bytes of the file (at least the first KiB when it has one).
TextKind SniffText(std::string_view head);

// Whether `head` holds a line NCCL or a framework around it prints (NCCL
// INFO/WARN, "NCCL version", ProcessGroupNCCL, torch.distributed).
bool HasLogMarker(std::string_view head);

}  // namespace fabcheck::logs
