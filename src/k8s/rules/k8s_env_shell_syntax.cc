// k8s.env.shell-syntax: an env value written $VAR, which Kubernetes passes through literally.
#include <algorithm>
#include <cctype>

#include "k8s/rules/common.h"

namespace fabcheck::k8s::rules {
namespace {

// The first "$NAME" or "${NAME}" (not "$(NAME)", not the "$$" escape), or "".
std::string ShellReference(const std::string& v) {
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    if (v[i] != '$') continue;
    char next = v[i + 1];
    if (next == '$') {
      ++i;
      continue;
    }
    if (next == '{' || next == '_' || std::isalpha(static_cast<unsigned char>(next))) {
      size_t end = i + 1;
      while (end < v.size() && (std::isalnum(static_cast<unsigned char>(v[end])) || v[end] == '_' ||
                                v[end] == '{' || v[end] == '}')) {
        ++end;
      }
      return v.substr(i, end - i);
    }
  }
  return "";
}

void Check(const Context& ctx, Reporter& out) {
  for (const auto& pod : ctx.pods) {
    for (const auto& c : pod.containers) {
      for (const auto& e : c.env) {
        // A multi-line value is a script kept in a variable (run later by
        // `sh -c "$WORKER_COMMAND"`): its $ belong to that shell.
        if (!e.has_value || e.value.find('\n') != std::string::npos) continue;
        std::string ref = ShellReference(e.value);
        if (ref.empty()) continue;
        std::string name = ref;
        name.erase(std::remove_if(name.begin(), name.end(), [](char ch) { return ch == '$' || ch == '{' || ch == '}'; }),
                   name.end());
        out.Add(PodReport(pod, &c, e.line,
                          "env " + e.name + " is '" + e.value + "': Kubernetes does not expand " + ref +
                              ", the process receives the text literally",
                          {e.name + " = " + e.value, "Kubernetes expands only $(" + name + ") references"}));
      }
    }
  }
}

}  // namespace

const Rule& RuleEnvShellSyntax() {
  static const Rule kRule{
      {"k8s.env.shell-syntax", Level::kWarning, "workload", "Env value uses $VAR, which Kubernetes does not expand",
       "Kubernetes expands $(VAR) in env values, command and args, using variables defined earlier in the "
       "container; $VAR and ${VAR} are shell syntax and reach the process unchanged. MASTER_ADDR=$LWS_LEADER_ADDRESS "
       "or NCCL_SOCKET_IFNAME=$IFACE then hold the literal text.",
       "Write $(VAR) and define VAR earlier in the same env list (or from the downward API); or expand it in a "
       "shell started by command: [sh, -c, ...].",
       "kubernetes-sigs/lws vLLM and SGLang examples; Kubernetes docs 'Define dependent environment variables'", {}},
      &Check};
  return kRule;
}

}  // namespace fabcheck::k8s::rules
