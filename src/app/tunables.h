// Every command-line tunable is declared once, here or through these helpers:
// name, type and range, default, environment variable and doc. A declaration
// adds the CLI11 option with its check (an invalid value is a usage error
// naming the option and the range, never a silent default or a wrapped
// number) and its environment fallback, and records a row in the table that
// `fabcheck tunables` prints and docs/tunables.md is generated from
// (`fabcheck tunables --markdown > docs/tunables.md`; a test keeps them equal).
//
//   app::Tunables t(serve, "perf serve");
//   t.Port("--port", a->port, "Control port", /*zero_means_any=*/true);
//   t.Seconds("--timeout", a->timeout, "Seconds any wait on a client may block");
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/tls.h"

namespace fabcheck::app {

struct TunableRow {
  std::string command;        // "perf serve"
  std::string name;           // "--port"
  std::string type;           // "port 0..65535", "integer 1..64", "seconds > 0", "path", ...
  std::string default_value;  // "" when none
  std::string env;            // environment variable, "" when none
  std::string doc;
};

// Every row declared so far (all of them once the commands are set up).
const std::vector<TunableRow>& AllTunables();
// The table as Markdown (docs/tunables.md) or as aligned text.
std::string TunablesMarkdown();
std::string TunablesText();

class Tunables {
 public:
  Tunables(CLI::App* cmd, std::string command) : cmd_(cmd), command_(std::move(command)) {}

  CLI::Option* Integer(const std::string& name, int& value, const std::string& doc, int64_t min, int64_t max,
                       const std::string& env = "");
  CLI::Option* Count(const std::string& name, uint64_t& value, const std::string& doc, uint64_t min, uint64_t max,
                     const std::string& env = "");
  // 1..65535, or 0..65535 when `zero_means_any` (a free port is picked).
  CLI::Option* Port(const std::string& name, int& value, const std::string& doc, bool zero_means_any,
                    const std::string& env = "");
  // A finite number of seconds above `min_exclusive` (or from 0 with `zero_allowed`, "0 = no limit").
  CLI::Option* Seconds(const std::string& name, double& value, const std::string& doc, bool zero_allowed = false,
                       const std::string& env = "");
  // A non-empty path; "-" is refused unless `dash_is_stdio` (the caller handles it).
  CLI::Option* Path(const std::string& name, std::string& value, const std::string& doc, bool dash_is_stdio = false,
                    const std::string& env = "");
  // A finite number within [min, max] (fractions, ratios).
  CLI::Option* Number(const std::string& name, double& value, const std::string& doc, double min, double max,
                      const std::string& env = "");
  // Free text checked by its consumer (sizes, lists, addresses).
  CLI::Option* Text(const std::string& name, std::string& value, const std::string& doc, const std::string& type,
                    const std::string& env = "");
  // A repeatable option: every occurrence adds one value ("--data-iface net1 --data-iface net2").
  CLI::Option* List(const std::string& name, std::vector<std::string>& values, const std::string& doc,
                    const std::string& type, const std::string& env = "");
  CLI::Option* Flag(const std::string& name, bool& value, const std::string& doc);
  // --tls-cert, --tls-key and --tls-ca (FABCHECK_TLS_CERT, _KEY, _CA), documented
  // for a server (serve HTTPS; --tls-ca turns on mutual TLS), a client (verify
  // the server; present a certificate for mutual TLS), or the ranks of a job
  // (rank 0 serves, the others verify it). docs/tls.md.
  enum class TlsRole { kServer, kClient, kRanks };
  void Tls(net::TlsFiles& files, TlsRole role);

 private:
  CLI::Option* Record(CLI::Option* option, const std::string& type, const std::string& env, const std::string& doc);

  CLI::App* cmd_;
  std::string command_;
};

// A coordinator's TLS (ladder, sweep): with agents given by list, client files
// that load; in an SPMD launch, mutual TLS among the ranks (agent::CheckSpmdTls).
Status CheckAgentsTls(const net::TlsFiles& files, bool agents_listed);

}  // namespace fabcheck::app
