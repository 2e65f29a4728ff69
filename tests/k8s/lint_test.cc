// Suppression, config files, profiles, and the command line's exit codes.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <filesystem>

#include "k8s/registry.h"
#include "test_util.h"

namespace fabcheck::k8s {
namespace {

using testing::CountId;
using testing::Describe;
using testing::LintText;

constexpr const char* kRdmaPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ai
  annotations:
    k8s.v1.cni.cncf.io/networks: rdma-macvlan
    ANNOTATION
spec:
  containers:
    - name: c
      image: busybox
      resources:
        limits:
          rdma/rdma_shared_device_a: 1
)";

std::string Pod(const std::string& annotation) {
  std::string s = kRdmaPod;
  s.replace(s.find("ANNOTATION"), 10, annotation.empty() ? "x: \"y\"" : annotation);
  return s;
}

TEST(Suppression, AnnotationWithReasonSilencesTheRule) {
  LintResult r = LintText(Pod("fabcheck.io/ignore-k8s.rdma.no-ipc-lock: \"memlock raised by the node image\""));
  EXPECT_EQ(CountId(r, "k8s.rdma.no-ipc-lock"), 0) << Describe(r);
  ASSERT_EQ(r.suppressed.size(), 1u);
  EXPECT_NE(r.suppressed[0].suppressed_by.find("memlock raised"), std::string::npos);
}

TEST(Suppression, EmptyReasonDoesNotSuppress) {
  LintResult r = LintText(Pod("fabcheck.io/ignore-k8s.rdma.no-ipc-lock: \"\""));
  ASSERT_EQ(CountId(r, "k8s.rdma.no-ipc-lock"), 1);
  bool noted = false;
  for (const auto& f : r.findings) {
    for (const auto& e : f.finding.evidence) noted = noted || e.find("needs a reason") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

TEST(Profiles, PlatformsThatRaiseMemlockDoNotNeedIpcLock) {
  EXPECT_EQ(CountId(LintText(Pod("")), "k8s.rdma.no-ipc-lock"), 1);
  EXPECT_EQ(CountId(LintText(Pod(""), "coreweave"), "k8s.rdma.no-ipc-lock"), 0);
  EXPECT_EQ(CountId(LintText(Pod(""), "gke"), "k8s.rdma.no-ipc-lock"), 0);
  EXPECT_EQ(CountId(LintText(Pod(""), "aks"), "k8s.rdma.no-ipc-lock"), 1);
}

TEST(Profiles, GkeInterfacesAnnotationGivesThePodItsInterfaces) {
  std::string pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: a3u
  namespace: default
  annotations:
    networking.gke.io/default-interface: eth0
    networking.gke.io/interfaces: |
      [{"interfaceName": "eth0", "network": "default"},
       {"interfaceName": "eth2", "network": "rdma-0"}, {"interfaceName": "eth3", "network": "rdma-1"}]
spec:
  containers:
    - name: c
      image: busybox
      env:
        - name: NCCL_SOCKET_IFNAME
          value: eth0
        - name: GLOO_SOCKET_IFNAME
          value: "=eth9"
      resources:
        limits:
          nvidia.com/gpu: 2
          networking.gke.io.networks/rdma-0: 1
          networking.gke.io.networks/rdma-1: 1
)";
  LintResult r = LintText(pod, "gke");
  EXPECT_EQ(CountId(r, "k8s.rdma.no-network"), 0) << Describe(r);
  EXPECT_EQ(CountId(r, "k8s.nccl.socket-ifname"), 1) << Describe(r);  // eth9 only
  EXPECT_EQ(CountId(r, "k8s.rails.gpu-nic-ratio"), 0) << Describe(r);
}

TEST(Config, IncludeExcludeSeverityAndParams) {
  auto config = ParseLintConfig(R"(rules:
  exclude: ["k8s.rdma.*"]
severity:
  k8s.shm.missing: error
params:
  k8s.shm.missing:
    minGpus: 4
)",
                                "c.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_TRUE(ValidateConfig(*config).ok());
  EXPECT_FALSE(config->RuleEnabled("k8s.rdma.no-ipc-lock"));
  EXPECT_TRUE(config->RuleEnabled("k8s.shm.missing"));
  std::string pod = R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ai}
spec:
  containers:
    - name: c
      image: busybox
      resources: {limits: {nvidia.com/gpu: GPUS, rdma/rdma_shared_device_a: 1}}
)";
  auto with = [&](int gpus) {
    std::string s = pod;
    s.replace(s.find("GPUS"), 4, std::to_string(gpus));
    return LintText(s, "generic", *config);
  };
  LintResult two = with(2);
  EXPECT_EQ(CountId(two, "k8s.shm.missing"), 0) << Describe(two);
  EXPECT_EQ(CountId(two, "k8s.rdma.no-ipc-lock"), 0);
  LintResult four = with(4);
  ASSERT_EQ(CountId(four, "k8s.shm.missing"), 1);
  EXPECT_EQ(four.findings[0].level, Level::kError);
}

TEST(Config, MistakesAreErrorsNotDefaults) {
  EXPECT_FALSE(ParseLintConfig("rulez: {}\n", "c.yaml").ok());
  EXPECT_FALSE(ParseLintConfig("profile: azure\n", "c.yaml").ok());
  EXPECT_FALSE(ParseLintConfig("failOn: info\n", "c.yaml").ok());
  auto unknown_rule = ParseLintConfig("rules: {exclude: [k8s.no-such-rule]}\n", "c.yaml");
  ASSERT_TRUE(unknown_rule.ok());
  EXPECT_FALSE(ValidateConfig(*unknown_rule).ok());
  auto bad_param = ParseLintConfig("params: {kubelet.topology.unsatisfiable: {gpusPerNumaNode: four}}\n", "c.yaml");
  ASSERT_TRUE(bad_param.ok());
  Status st = ValidateConfig(*bad_param);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("gpusPerNumaNode"), std::string::npos);
  auto unknown_param = ParseLintConfig("params: {k8s.shm.missing: {gpus: 2}}\n", "c.yaml");
  ASSERT_TRUE(unknown_param.ok());
  EXPECT_FALSE(ValidateConfig(*unknown_param).ok());
}

TEST(CrossObject, NadResolutionUsesThePodNamespace) {
  std::string yaml = R"(apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: net, namespace: a}
spec:
  config: '{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth1"}'
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: b
  annotations: {k8s.v1.cni.cncf.io/networks: "net, a/net"}
spec:
  containers: [{name: c, image: busybox}]
)";
  LintResult r = LintText(yaml);
  EXPECT_EQ(CountId(r, "k8s.nad.missing"), 1) << Describe(r);          // "net" in b
  EXPECT_EQ(CountId(r, "k8s.nad.cross-namespace"), 1) << Describe(r);  // "a/net"
}

TEST(Suppression, PodTemplateAnnotationWorksForWorkloads) {
  std::string yaml = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ai}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata:
      labels: {app: d}
      annotations:
        fabcheck.io/ignore-k8s.privileged: "node debugging tool, reviewed"
    spec:
      containers:
        - name: c
          image: busybox
          securityContext: {privileged: true}
          resources: {limits: {nvidia.com/gpu: 1}}
)";
  LintResult r = LintText(yaml);
  EXPECT_EQ(CountId(r, "k8s.privileged"), 0) << Describe(r);
  EXPECT_EQ(r.suppressed.size(), 1u);
}

TEST(Schema, DevicePluginConfigThatIsNotJsonIsReported) {
  std::string yaml = R"(apiVersion: mellanox.com/v1alpha1
kind: NicClusterPolicy
metadata: {name: nic-cluster-policy}
spec:
  rdmaSharedDevicePlugin:
    config: |
      {"configList": [ {"resourceName": "a", "rdmaHcaMax": 63,}]}
)";
  LintResult r = LintText(yaml);
  ASSERT_EQ(CountId(r, "schema.invalid"), 1) << Describe(r);
  EXPECT_EQ(r.findings[0].finding.location->line, 6);
}

// --- the binary: exit codes, stdin, formats -------------------------------------------

struct RunOutput {
  int code;
  std::string out;
};

RunOutput RunFabcheck(const std::string& args, const std::string& stdin_text = "") {
  std::string input = std::filesystem::temp_directory_path() / ("fabcheck-k8s-stdin-" + std::to_string(getpid()));
  {
    std::ofstream f(input);
    f << stdin_text;
  }
  std::string cmd = std::string(FABCHECK_BINARY) + " " + args + " < " + input + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  std::filesystem::remove(input);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(Cli, ExitCodes) {
  if (!std::filesystem::exists(FABCHECK_BINARY)) GTEST_SKIP() << "fabcheck binary not built";
  std::string clean = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n";
  EXPECT_EQ(RunFabcheck("k8s lint -", clean).code, 0);
  EXPECT_EQ(RunFabcheck("k8s lint -", Pod("")).code, 2);                   // an error
  std::string warning_only = testing::ReadFile(std::string(FABCHECK_SOURCE_DIR) +
                                               "/tests/k8s/manifests/k8s.env.shell-syntax/positive.yaml");
  EXPECT_EQ(RunFabcheck("k8s lint -", warning_only).code, 1);  // warnings below --fail-on exit 1, as everywhere
  EXPECT_EQ(RunFabcheck("k8s lint - --fail-on warning", warning_only).code, 2);
  EXPECT_EQ(RunFabcheck("k8s lint /nonexistent/x.yaml").code, 3);
  EXPECT_EQ(RunFabcheck("k8s lint - --format yaml", clean).code, 64);
  EXPECT_EQ(RunFabcheck("k8s lint - --platform azure", clean).code, 64);
  EXPECT_EQ(RunFabcheck("k8s lint -", "a: [1,\n").code, 2);               // malformed YAML is a finding
  RunOutput json = RunFabcheck("k8s lint - --format json", Pod(""));
  auto parsed = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << json.out;
  EXPECT_EQ(parsed["schema"], "fabcheck.k8s-lint/v1");
  EXPECT_EQ(parsed["findings"][0]["level"], "error");
}

}  // namespace
}  // namespace fabcheck::k8s
