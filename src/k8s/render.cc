#include "k8s/render.h"

#include <fmt/format.h>

#include <regex>

#include "base/strings.h"
#include "fabcheck/version.h"
#include "k8s/ip.h"
#include "k8s/yaml_tree.h"

namespace fabcheck::k8s {
namespace {

Status FieldError(const std::string& file, const YNode& node, const std::string& message) {
  return InvalidArgumentError(file + ":" + std::to_string(node.line) + ": " + message);
}

bool PerDevice(const RenderProfile& p) {
  return p.network_type == "sriov" || p.network_type == "ib-sriov" || p.network_type == "host-device";
}

std::string Labels(const std::string& indent, const std::string& component) {
  return fmt::format("{0}app.kubernetes.io/name: fabcheck\n{0}app.kubernetes.io/component: {1}\n", indent, component);
}

std::string NodeSelector(const RenderProfile& p, const std::string& indent) {
  if (p.node_selector.empty()) return "";
  std::string s = indent + "nodeSelector:\n";
  for (const auto& [k, v] : p.node_selector) s += fmt::format("{}  {}: \"{}\"\n", indent, k, v);
  return s;
}

std::string CniConfig(const RenderProfile& p) {
  std::string ipam = fmt::format(R"("ipam": {{"type": "whereabouts", "range": "{}"}})", p.subnet);
  std::string mtu = p.mtu > 0 ? fmt::format(R"("mtu": {}, )", p.mtu) : "";
  if (p.network_type == "sriov") {
    std::string vlan = p.vlan > 0 ? fmt::format(R"("vlan": {}, )", p.vlan) : "";
    return fmt::format(R"({{"cniVersion": "0.3.1", "name": "{}", "type": "sriov", {}{}{}}})", p.nad_name, vlan, mtu, ipam);
  }
  if (p.network_type == "ib-sriov") {
    return fmt::format(R"({{"cniVersion": "0.3.1", "name": "{}", "type": "ib-sriov", "link_state": "enable", {}}})",
                       p.nad_name, ipam);
  }
  if (p.network_type == "host-device") {
    return fmt::format(R"({{"cniVersion": "0.3.1", "name": "{}", "type": "host-device", {}}})", p.nad_name, ipam);
  }
  std::string mode = p.network_type == "macvlan" ? "bridge" : "l2";
  return fmt::format(R"({{"cniVersion": "0.3.1", "name": "{}", "type": "{}", "master": "{}", "mode": "{}", {}{}}})",
                     p.nad_name, p.network_type, p.master, mode, mtu, ipam);
}

std::string RenderNamespace(const RenderProfile& p) {
  return fmt::format(R"(# The namespace of fabcheck's agents and test jobs. RDMA test pods add the
# IPC_LOCK capability, which the Pod Security "baseline" level rejects, so the
# namespace enforces "privileged" (fabcheck k8s lint: k8s.psa.incompatible).
apiVersion: v1
kind: Namespace
metadata:
  name: {0}
  labels:
    pod-security.kubernetes.io/enforce: privileged
    # Any other violation of Baseline (the exporter's hostPath mounts aside) is still reported.
    pod-security.kubernetes.io/warn: baseline
    pod-security.kubernetes.io/audit: baseline
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {1}
  namespace: {0}
---
# The exporter labels metrics with pod names: read-only access to pods and nodes.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {1}-read
rules:
  - apiGroups: [""]
    resources: ["pods", "nodes"]
    verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {1}-read
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {1}-read
subjects:
  - kind: ServiceAccount
    name: {1}
    namespace: {0}
)",
                     p.ns, p.name);
}

std::string RenderNetwork(const RenderProfile& p) {
  std::string annotation =
      PerDevice(p) ? fmt::format("  annotations:\n    k8s.v1.cni.cncf.io/resourceName: {}\n", p.rdma_resource) : "";
  std::string comment =
      PerDevice(p)
          ? "# One VF (or host device) of " + p.rdma_resource + " per attachment; the CNI takes the device\n"
            "# the kubelet allocated for that resource (so pods must request it).\n"
          : "# " + p.network_type + " on " + p.master + ": each pod gets an address on the shared HCA's port,\n"
            "# which creates its RoCE GID. The RDMA device comes from " + p.rdma_resource + ".\n";
  return fmt::format(R"({}apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: {}
  namespace: {}
{}spec:
  config: |
    {}
)",
                     comment, p.nad_name, p.ns, annotation, CniConfig(p));
}

std::string RenderAgent(const RenderProfile& p) {
  return fmt::format(R"(# fabcheck agent (control API and TCP tests) and exporter (RDMA counters per
# node, NIC, port and pod) on every selected node. It holds no RDMA resource, so
# it never takes a VF away from jobs; RDMA tests run in the sweep Job. /sys is
# mounted read-only for the counters; the kubelet's pod-resources socket maps
# devices to pods. The agent requires the cluster's token (it refuses to serve
# the network without one); create it first:
#   kubectl -n {ns} create secret generic {name}-token --from-literal=token=$(openssl rand -hex 32)
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {name}-agent
  namespace: {ns}
  labels:
{labels4}spec:
  selector:
    matchLabels:
{labels6}  template:
    metadata:
      labels:
{labels8}      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "{exporter_port}"
        fabcheck.io/ignore-k8s.hostpath.devices: "the exporter reads RDMA port counters from the host's /sys, read-only"
    spec:
      serviceAccountName: {name}
{selector}      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      containers:
        - name: agent
          image: {image}
          command: ["fabcheck"]
          args: ["agent", "--listen", "0.0.0.0:{agent_port}", "--token-file", "/etc/fabcheck/token/token"]
          ports:
            - name: agent
              containerPort: {agent_port}
          # No RDMA here and no capability; root only to read the token Secret
          # (mode 0400, root's: the token policy refuses group-readable files,
          # which an fsGroup would make it).
          securityContext:
            runAsUser: 0
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: ["ALL"]
            seccompProfile:
              type: RuntimeDefault
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
            limits:
              memory: 512Mi
          volumeMounts:
            - name: token
              mountPath: /etc/fabcheck/token
              readOnly: true
        - name: exporter
          image: {image}
          command: ["fabcheck"]
          args:
            - exporter
            - --listen
            - 0.0.0.0:{exporter_port}
            - --sysroot
            - /host
            - --kubelet-socket
            - /var/lib/kubelet/pod-resources/kubelet.sock
            - --node-name
            - $(NODE_NAME)
          env:
            - name: NODE_NAME
              valueFrom:
                fieldRef:
                  fieldPath: spec.nodeName
          ports:
            - name: metrics
              containerPort: {exporter_port}
          # Root only to open the kubelet's socket (root-only); no capability.
          securityContext:
            runAsUser: 0
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: ["ALL"]
            seccompProfile:
              type: RuntimeDefault
          resources:
            requests:
              cpu: 50m
              memory: 64Mi
            limits:
              memory: 256Mi
          volumeMounts:
            - name: sys
              mountPath: /host/sys
              readOnly: true
            - name: pod-resources
              mountPath: /var/lib/kubelet/pod-resources
              readOnly: true
      volumes:
        # Pod Security Baseline exceptions (hostPath), both mounted read-only:
        # the host's RDMA counters, and which pod holds which device.
        - name: sys
          hostPath:
            path: /sys
        - name: pod-resources
          hostPath:
            path: /var/lib/kubelet/pod-resources
        - name: token
          secret:
            secretName: {name}-token
            defaultMode: 0400
)",
                     fmt::arg("name", p.name), fmt::arg("ns", p.ns), fmt::arg("image", p.image),
                     fmt::arg("labels4", Labels("    ", "agent")), fmt::arg("labels6", Labels("      ", "agent")),
                     fmt::arg("labels8", Labels("        ", "agent")), fmt::arg("selector", NodeSelector(p, "      ")),
                     fmt::arg("agent_port", p.agent_port), fmt::arg("exporter_port", p.exporter_port));
}

std::string RenderSweep(const RenderProfile& p) {
  int attachments = PerDevice(p) ? p.nics_per_node : 1;
  std::vector<std::string> nets;
  for (int i = 1; i <= attachments; ++i) nets.push_back(fmt::format("{}@net{}", p.nad_name, i));
  std::string gpu_limit = p.gpus_per_node > 0 ? fmt::format("              nvidia.com/gpu: {}\n", p.gpus_per_node) : "";
  std::string limits = fmt::format("{}              {}: {}\n", gpu_limit, p.rdma_resource, attachments);
  return fmt::format(R"(# A sweep across {nodes} nodes as an Indexed Job: rank = JOB_COMPLETION_INDEX,
# rank 0 coordinates at {name}-sweep-0.{name}-sweep (the headless Service gives
# each pod a DNS name). One pod per node; each pod gets the node's RDMA NICs
# through {nad} ({attachments} attachment(s), net1...), IPC_LOCK for memory
# registration and a memory-backed /dev/shm for the GPU memory tests.
apiVersion: v1
kind: Service
metadata:
  name: {name}-sweep
  namespace: {ns}
spec:
  clusterIP: None
  selector:
    app.kubernetes.io/component: sweep
  ports:
    - name: control
      port: {port}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}-sweep
  namespace: {ns}
  labels:
{labels4}spec:
  completionMode: Indexed
  completions: {nodes}
  parallelism: {nodes}
  backoffLimit: 0
  ttlSecondsAfterFinished: 86400
  template:
    metadata:
      labels:
{labels8}      annotations:
        k8s.v1.cni.cncf.io/networks: {networks}
    spec:
      subdomain: {name}-sweep
      restartPolicy: Never
{selector}      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector:
                matchLabels:
                  app.kubernetes.io/component: sweep
              topologyKey: kubernetes.io/hostname
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      containers:
        - name: sweep
          image: {image}
          command: ["fabcheck"]
          args: ["sweep", "--world", "{nodes}", "--coordinator", "{name}-sweep-0.{name}-sweep:{port}"]
          ports:
            - name: control
              containerPort: {port}
          # IPC_LOCK (RDMA memory registration; the namespace's Baseline
          # exception) is effective only for root: the image's user is not.
          securityContext:
            runAsUser: 0
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
              add: ["IPC_LOCK"]
            seccompProfile:
              type: RuntimeDefault
          resources:
            requests:
{limits}            limits:
{limits}          volumeMounts:
            - name: dshm
              mountPath: /dev/shm
      volumes:
        - name: dshm
          emptyDir:
            medium: Memory
            sizeLimit: 16Gi
)",
                     fmt::arg("name", p.name), fmt::arg("ns", p.ns), fmt::arg("image", p.image),
                     fmt::arg("nodes", p.nodes), fmt::arg("nad", p.nad_name), fmt::arg("attachments", attachments),
                     fmt::arg("port", p.sweep_port), fmt::arg("labels4", Labels("    ", "sweep")),
                     fmt::arg("labels8", Labels("        ", "sweep")), fmt::arg("networks", Join(nets, ",")),
                     fmt::arg("selector", NodeSelector(p, "      ")), fmt::arg("limits", limits));
}

}  // namespace

std::string DefaultImage() { return std::string("localhost/fabcheck:") + kVersion; }

Status ValidateImageReference(const std::string& image) {
  // Lower-case repository path components separated by '/', an optional
  // registry host[:port] first, an optional tag, an optional sha256 digest
  // (the grammar of the distribution reference, without other algorithms).
  static const std::regex kReference(
      "^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]+)?/)?"
      "[a-z0-9]+([._-]+[a-z0-9]+)*(/[a-z0-9]+([._-]+[a-z0-9]+)*)*"
      "(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$");
  if (image.empty()) return InvalidArgumentError("the image reference is empty");
  // Names are at most 255 characters, tags 128, digests 71; std::regex
  // recurses per character, so nothing longer reaches it.
  if (image.size() > 512) {
    return InvalidArgumentError("the image reference is " + std::to_string(image.size()) +
                                " characters long; no valid image reference is over 512");
  }
  if (std::regex_match(image, kReference)) return Status::Ok();
  std::string hint = image.find("@sha256:") != std::string::npos
                         ? " (a digest is sha256: and 64 lower-case hex digits)"
                         : " (expected [REGISTRY/]REPOSITORY[:TAG][@sha256:DIGEST], e.g. " + DefaultImage() +
                               "@sha256:...)";
  return InvalidArgumentError("'" + image + "' is not an image reference" + hint);
}

bool ImagePinned(const std::string& image) { return image.find("@sha256:") != std::string::npos; }

Result<RenderProfile> ParseRenderProfile(const std::string& text, const std::string& file) {
  YamlDocument doc = ParseYamlDocument(text, 0);
  for (const auto& issue : doc.issues) {
    return InvalidArgumentError(file + ":" + std::to_string(issue.line) + ": " + issue.message);
  }
  if (!doc.root || !doc.root->IsMap()) return InvalidArgumentError(file + ": the profile must be a YAML map");
  const YNode& top = *doc.root;
  const YNode& root = top.Has("spec") ? top.Get("spec") : top;
  RenderProfile p;
  if (top.Has("spec") && !top.Get("metadata").Get("name").Str().empty()) p.name = top.Get("metadata").Get("name").Str();
  static const std::regex kDns("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$");
  static const std::regex kImage("^[A-Za-z0-9][A-Za-z0-9./:@_-]*$");
  static const std::regex kResource("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$");
  static const std::regex kIface("^[A-Za-z0-9][A-Za-z0-9._-]{0,14}$");
  static const std::regex kLabel("^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$");
  for (const auto& entry : root.entries) {
    const auto& [k, v] = entry;
    const auto& value = entry.second;  // clang 14 (the fuzz build) cannot capture a structured binding
    const std::string& key = k->value;
    auto str = [&](std::string& field, const std::regex& re, const char* what) -> Status {
      if (!value->IsScalar() || !std::regex_match(value->value, re)) {
        return FieldError(file, *value, key + " must be " + what + " (got '" + value->Str() + "')");
      }
      field = value->value;
      return Status::Ok();
    };
    auto num = [&](int& field, int lo, int hi) -> Status {
      auto n = value->AsInt();
      if (!n || *n < lo || *n > hi) {
        return FieldError(file, *value, key + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
      }
      field = static_cast<int>(*n);
      return Status::Ok();
    };
    if (key == "name") {
      RETURN_IF_ERROR(str(p.name, kDns, "a DNS label"));
    } else if (key == "namespace") {
      RETURN_IF_ERROR(str(p.ns, kDns, "a DNS label"));
    } else if (key == "image") {
      RETURN_IF_ERROR(str(p.image, kImage, "an image reference"));
      if (auto st = ValidateImageReference(p.image); !st.ok()) return FieldError(file, *v, "image: " + st.message());
    } else if (key == "nadName") {
      RETURN_IF_ERROR(str(p.nad_name, kDns, "a DNS label"));
    } else if (key == "networkType") {
      static const std::regex kTypes("^(sriov|ib-sriov|host-device|macvlan|ipvlan)$");
      RETURN_IF_ERROR(str(p.network_type, kTypes, "sriov, ib-sriov, host-device, macvlan or ipvlan"));
    } else if (key == "rdmaResource") {
      RETURN_IF_ERROR(str(p.rdma_resource, kResource, "a resource name such as nvidia.com/rdma_vf"));
    } else if (key == "master") {
      RETURN_IF_ERROR(str(p.master, kIface, "an interface name"));
    } else if (key == "subnet") {
      if (!v->IsScalar() || !ParseCidr(v->value)) return FieldError(file, *v, "subnet must be a CIDR such as 192.168.100.0/24");
      p.subnet = v->value;
    } else if (key == "mtu") {
      RETURN_IF_ERROR(num(p.mtu, 576, 65520));
    } else if (key == "vlan") {
      RETURN_IF_ERROR(num(p.vlan, 0, 4094));
    } else if (key == "gpusPerNode") {
      RETURN_IF_ERROR(num(p.gpus_per_node, 0, 64));
    } else if (key == "nicsPerNode") {
      RETURN_IF_ERROR(num(p.nics_per_node, 1, 64));
    } else if (key == "nodes") {
      RETURN_IF_ERROR(num(p.nodes, 2, 100000));
    } else if (key == "agentPort") {
      RETURN_IF_ERROR(num(p.agent_port, 1, 65535));
    } else if (key == "exporterPort") {
      RETURN_IF_ERROR(num(p.exporter_port, 1, 65535));
    } else if (key == "sweepPort") {
      RETURN_IF_ERROR(num(p.sweep_port, 1, 65535));
    } else if (key == "nodeSelector") {
      if (!v->IsMap()) return FieldError(file, *v, "nodeSelector must be a map of labels");
      for (const auto& [lk, lv] : v->entries) {
        if (!std::regex_match(lk->value, kLabel) || !lv->IsScalar() ||
            (!lv->value.empty() && !std::regex_match(lv->value, kLabel))) {
          return FieldError(file, *lk, "nodeSelector entry '" + lk->value + "' is not a valid label");
        }
        p.node_selector[lk->value] = lv->value;
      }
    } else {
      return FieldError(file, *k,
                        "unknown key '" + key +
                            "' (expected name, namespace, image, nadName, networkType, rdmaResource, master, subnet, "
                            "mtu, vlan, gpusPerNode, nicsPerNode, nodes, agentPort, exporterPort, sweepPort, "
                            "nodeSelector)");
    }
  }
  if (p.rdma_resource.empty()) {
    return InvalidArgumentError(file + ": 'rdmaResource' is required (e.g. nvidia.com/rdma_vf or rdma/rdma_shared_device_a)");
  }
  if ((p.network_type == "macvlan" || p.network_type == "ipvlan") && p.master.empty()) {
    return InvalidArgumentError(file + ": networkType " + p.network_type + " needs 'master' (the parent interface)");
  }
  return p;
}

std::vector<RenderedFile> Render(const RenderProfile& p) {
  return {{"00-namespace.yaml", RenderNamespace(p)},
          {"10-network.yaml", RenderNetwork(p)},
          {"20-agent-daemonset.yaml", RenderAgent(p)},
          {"30-sweep-job.yaml", RenderSweep(p)}};
}

}  // namespace fabcheck::k8s
