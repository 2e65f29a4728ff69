// ibv_wc_status (rdma-core libibverbs/verbs.h): every value by name, with
// what it means when NCCL reports it in "Got completion ... status=N".
#pragma once

#include <string_view>

namespace fabcheck::logs {

struct WcStatusInfo {
  int value;
  std::string_view name;     // "IBV_WC_RETRY_EXC_ERR"
  std::string_view meaning;  // one line
};

// nullptr for a value outside the enum.
const WcStatusInfo* FindWcStatus(int value);

}  // namespace fabcheck::logs
