#include "control/server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <new>

#include "base/json_text.h"
#include "base/log.h"
#include "base/malloc_arenas.h"
#include "base/strings.h"
#include "net/json_call.h"

namespace fabcheck::control {
namespace {

void Reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(ToJsonText(body), "application/json");
}

void Error(httplib::Response& res, int status, const std::string& message) {
  Reply(res, status, nlohmann::json{{"error", message}});
}

// A test slot taken for the length of one request, given back however it ends.
class TestSlot {
 public:
  explicit TestSlot(std::atomic<int>& running) : running_(running) {}
  ~TestSlot() { running_.fetch_sub(1); }
  TestSlot(const TestSlot&) = delete;
  TestSlot& operator=(const TestSlot&) = delete;

 private:
  std::atomic<int>& running_;
};

// Runs a route's work; running out of memory is the request's error
// (ResourceExhausted, HTTP 429: the agent goes on), never the agent's end.
template <typename Fn>
void OrOutOfMemory(httplib::Response& res, const char* what, Fn fn) {
  try {
    fn();
  } catch (const std::bad_alloc&) {
    res.body.clear();
    Error(res, net::HttpStatusFor(StatusCode::kResourceExhausted),
          fmt::format("{}: the agent ran out of memory serving this request (ask for less)", what));
  }
  // A heavy request (tests, transfers, the node's snapshot) frees what it
  // took, but the allocator keeps it; give it back to the GPU node.
  base::ReturnFreedMemory();
}

}  // namespace

AgentServer::~AgentServer() { Stop(); }

void AgentServer::Stop() {
  if (http_) {
    Status s = http_->Stop();
    if (!s.ok()) LOG_WARN("agent", "{}", s.message());
  }
}

void AgentServer::SetInfo(AgentInfo info) {
  std::lock_guard lock(info_mu_);
  options_.info = std::move(info);
}

Result<std::unique_ptr<AgentServer>> AgentServer::Start(AgentServerOptions options) {
  std::unique_ptr<AgentServer> s(new AgentServer(std::move(options)));
  AgentServer* self = s.get();
  const AgentServerOptions& o = self->options_;
  net::HttpServiceOptions service;
  service.name = "agent";
  service.bind = o.bind;
  service.port = o.port;
  service.bind_hint = "in use? another agent running? choose another --listen port";
  service.token = o.token;
  service.public_paths = {"/v1/health"};
  service.unauthorized_message = "missing or wrong token: pass the agents' token (--token-file) to the coordinator";
  service.limits = o.limits;
  service.tls = o.tls;
  // Tests and node reads hold a worker while they run: keep some for health checks.
  service.limits.workers = std::max(service.limits.workers, o.max_concurrent_tests + 4);
  service.limits.max_connections = std::max(service.limits.max_connections, service.limits.workers);
  auto routes = [self](httplib::Server& http) {
    http.Get("/v1/health", [self](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(self->info_mu_);
      Reply(res, 200,
            {{"status", "ok"},
             {"name", self->options_.info.name},
             {"fabcheck_version", self->options_.info.fabcheck_version}});
    });
    http.Get("/v1/info", [self](const httplib::Request&, httplib::Response& res) {
      AgentInfo info;
      {
        std::lock_guard lock(self->info_mu_);
        info = self->options_.info;
      }
      info.control_port = self->port_;
      info.auth = self->options_.token.has_value();
      Reply(res, 200, info);
    });
    http.Get("/v1/inventory", [self](const httplib::Request&, httplib::Response& res) {
      if (!self->options_.inventory) {
        Error(res, 501, "this agent was built without the inventory module");
        return;
      }
      auto inv = self->options_.inventory();
      if (!inv.ok()) return Error(res, net::HttpStatusFor(inv.status().code()), inv.status().message());
      Reply(res, 200, *inv);
    });
    // Ladder routes: the work is the wired-in handler's; one at a time per
    // agent, since each reads the whole node.
    auto json_route = [self](const JsonHandler* handler, const char* what) {
      return [self, handler, what](const httplib::Request& req, httplib::Response& res) {
        if (!*handler) return Error(res, 501, fmt::format("this agent does not serve {} (upgrade it)", what));
        nlohmann::json request = nlohmann::json::object();
        if (!req.body.empty()) {
          request = nlohmann::json::parse(req.body, nullptr, false);
          if (request.is_discarded() || !request.is_object()) {
            return Error(res, 400, fmt::format("{}: the body is not a JSON object", what));
          }
        }
        std::lock_guard lock(self->node_mu_);
        OrOutOfMemory(res, what, [&] {
          auto answer = (*handler)(request);
          if (!answer.ok()) return Error(res, net::HttpStatusFor(answer.status().code()), answer.status().message());
          Reply(res, 200, *answer);
        });
      };
    };
    http.Post("/v1/node", json_route(&self->options_.node, "/v1/node"));
    http.Get("/v1/counters", json_route(&self->options_.counters, "/v1/counters"));
    // A collective job runs for minutes and reads nothing of the node: it
    // holds no lock here (the handler refuses a second job itself), so the
    // ladder can still sample counters and check health meanwhile.
    http.Post("/v1/coll", [self](const httplib::Request& req, httplib::Response& res) {
      if (!self->options_.coll) return Error(res, 501, "this agent does not serve /v1/coll (upgrade it)");
      auto request = nlohmann::json::parse(req.body, nullptr, false);
      if (request.is_discarded() || !request.is_object()) {
        return Error(res, 400, "/v1/coll: the body is not a JSON object");
      }
      LOG_INFO("agent", "collective ranks requested by {}", req.remote_addr);
      OrOutOfMemory(res, "/v1/coll", [&] {
        auto answer = self->options_.coll(request);
        if (!answer.ok()) return Error(res, net::HttpStatusFor(answer.status().code()), answer.status().message());
        Reply(res, 200, *answer);
      });
    });
    // KV transfers run for seconds and read nothing of the node: no lock,
    // but they count against the tests this agent runs at once.
    http.Post("/v1/kv", [self](const httplib::Request& req, httplib::Response& res) {
      if (!self->options_.kv) return Error(res, 501, "this agent does not serve /v1/kv (upgrade it)");
      auto request = nlohmann::json::parse(req.body, nullptr, false);
      if (request.is_discarded() || !request.is_object()) {
        return Error(res, 400, "/v1/kv: the body is not a JSON object");
      }
      if (self->running_tests_.fetch_add(1) >= self->options_.max_concurrent_tests) {
        self->running_tests_.fetch_sub(1);
        return Error(res, net::HttpStatusFor(StatusCode::kFailedPrecondition),
                     fmt::format("agent busy: {} tests already running", self->options_.max_concurrent_tests));
      }
      TestSlot slot(self->running_tests_);
      LOG_INFO("agent", "kv transfers requested by {}", req.remote_addr);
      OrOutOfMemory(res, "/v1/kv", [&] {
        auto answer = self->options_.kv(request);
        self->tests_.fetch_add(1);
        if (!answer.ok()) return Error(res, net::HttpStatusFor(answer.status().code()), answer.status().message());
        Reply(res, 200, *answer);
      });
    });
    http.Post("/v1/test", [self](const httplib::Request& req, httplib::Response& res) {
      if (!self->options_.run_test) return Error(res, 501, "this agent cannot run tests");
      auto request = ParsePeerTestRequest(req.body);
      if (!request.ok()) return Error(res, 400, request.status().message());
      if (self->running_tests_.fetch_add(1) >= self->options_.max_concurrent_tests) {
        self->running_tests_.fetch_sub(1);
        return Error(res, net::HttpStatusFor(StatusCode::kFailedPrecondition),
                     fmt::format("agent busy: {} tests already running", self->options_.max_concurrent_tests));
      }
      LOG_INFO("agent", "test {} -> {} ({}) from {}", self->options_.info.name, request->peer_name, request->peer,
               req.remote_addr);
      TestSlot slot(self->running_tests_);
      OrOutOfMemory(res, "/v1/test", [&] {
        auto response = self->options_.run_test(*request);
        self->tests_.fetch_add(1);
        if (!response.ok()) return Error(res, net::HttpStatusFor(response.status().code()), response.status().message());
        Reply(res, 200, *response);
      });
    });
    http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) {
        Error(res, res.status,
              fmt::format("HTTP {} (routes: /v1/health, /v1/info, /v1/inventory, POST /v1/test, POST /v1/node, "
                          "GET /v1/counters, POST /v1/coll, POST /v1/kv)",
                          res.status));
      }
    });
  };
  ASSIGN_OR_RETURN(s->http_, net::HttpService::Start(std::move(service), routes));
  s->port_ = s->http_->port();
  return s;
}

}  // namespace fabcheck::control
