// nccl.env.ib-disable: NCCL_IB_DISABLE=1 or NCCL_NET=Socket took RDMA away.
#include "base/strings.h"
#include "diagnose/nccl_util.h"
#include "diagnose/rule.h"

namespace fabcheck::diagnose {
namespace {
void Run(const Evidence& ev, std::vector<model::Diagnosis>* out);
}  // namespace

extern const Rule kNcclEnvIbDisable = {
    "nccl.env.ib-disable", "NCCL", "NCCL_IB_DISABLE=1 or NCCL_NET=Socket was set",
    "Either one turns InfiniBand/RoCE off for NCCL; left over from a debugging A/B test it costs the job its "
    "network.",
    "Unset NCCL_IB_DISABLE and NCCL_NET (check the job spec, the container image's environment and /etc/nccl.conf).",
    &Run};

namespace {

void Run(const Evidence& ev, std::vector<model::Diagnosis>* out) {
  if (!ev.nccl) return;
  const auto& env = ev.nccl->env;
  auto ib = env.find("NCCL_IB_DISABLE");
  auto net = env.find("NCCL_NET");
  bool ib_off = ib != env.end() && Trim(ib->second) == "1";
  bool net_socket = net != env.end() && Trim(net->second) == "Socket";
  if (!ib_off && !net_socket) return;
  auto d = Make(kNcclEnvIbDisable, NeedsNetwork(*ev.nccl) ? model::Severity::kWarn : model::Severity::kInfo,
                model::Confidence::kHigh, ib_off ? "NCCL_IB_DISABLE" : "NCCL_NET",
                ib_off ? "NCCL_IB_DISABLE was set: NCCL does not use InfiniBand/RoCE and falls back to sockets"
                       : "NCCL_NET=Socket was set: NCCL does not use InfiniBand/RoCE");
  if (ib_off) d.evidence.push_back("NCCL_IB_DISABLE set by environment to " + ib->second);
  if (net_socket) d.evidence.push_back("NCCL_NET set by environment to " + net->second);
  d.causes = {"a diagnostic A/B setting (the seeds' \"disable IB to see if the problem is on the RDMA path\") left in "
              "the job",
              "a container image or /etc/nccl.conf that sets it for every job"};
  d.fix = kNcclEnvIbDisable.fix;
  d.next = "fabcheck doctor --only NCCL (reads the job's NCCL_* settings, --env-file job.env)";
  out->push_back(std::move(d));
}

}  // namespace
}  // namespace fabcheck::diagnose
