#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "router/hotkeys/salting/salt_overrides_json.h"
#include "router/runtime/control_plane.h"
#include "tests/support/fake_worker_services.h"

namespace santral::test {

// The server as a worker's commands see it (router/runtime/control_plane.h), for unit tests of
// the SANTRAL commands that ask the server's thread: what is asked is recorded with its `done`,
// which the test calls when it likes (the answer then goes home through the worker's io(), which
// the test polls: answer_and_poll). fleet_view() answers `fleet`. Installs itself as the
// worker's shared().control for its lifetime. Declare it after the clients: the answers it
// keeps hold their requests (and so the clients), and must be let go while the clients live.
class FakeControlPlane final : public router::ControlPlane {
 public:
  explicit FakeControlPlane(FakeWorkerServices& worker) : worker_(worker) {
    worker_.shared().control = this;
  }
  ~FakeControlPlane() override { worker_.shared().control = nullptr; }

  // --- what was asked, in order ---
  struct Reshard {
    ReshardVerb verb;
    std::function<void(ReshardAnswer)> done;
  };
  struct Balance {
    BalanceRequest request;
    std::function<void(BalanceAnswer)> done;
  };
  struct Analyze {
    AnalyzeRequest request;
    std::function<void(AnalyzeAnswer)> done;
  };
  struct MapPush {
    std::string text;
    std::function<void(ReloadResult)> done;
  };
  std::vector<Reshard> reshards;
  std::vector<Balance> balances;
  std::vector<Analyze> analyses;
  std::vector<MapPush> map_pushes;
  struct FailoverAccept {
    std::string shard;
    std::function<void(FailoverAnswer)> done;
  };
  std::vector<FailoverAccept> failover_accepts;
  std::optional<router::FleetView> fleet;  // nullopt: not in a fleet

  // Calls `done` with `answer`, then runs what that posted to the worker.
  template <typename Done, typename Answer>
  void answer_and_poll(Done& done, Answer answer) {
    done(std::move(answer));
    worker_.io().restart();
    worker_.io().poll();
  }

  // --- ControlPlane ---
  boost::asio::io_context& io() override { return io_; }
  placement::TopologyPtr topology() const override { return worker_.topology_ptr(); }
  router::SharedState& shared() override { return worker_.shared(); }
  std::vector<router::WorkerServices*> worker_services() const override { return {&worker_}; }
  const std::optional<ReloadRecord>& last_reload() const override { return last_reload_; }
  void reload(router::AuditActor, std::function<void(ReloadResult)>) override { not_in_the_fake(); }
  void push_map(std::string text, router::AuditActor,
                std::function<void(ReloadResult)> done) override {
    map_pushes.push_back({std::move(text), std::move(done)});
  }
  std::optional<router::FleetView> fleet_view() const override { return fleet; }
  std::optional<Unready> unready() const override { return std::nullopt; }
  void share_salting(router::SaltChange, std::function<void(std::string)>) override {
    not_in_the_fake();
  }
  void accept_failover(std::string shard, router::AuditActor,
                       std::function<void(FailoverAnswer)> done) override {
    failover_accepts.push_back({std::move(shard), std::move(done)});
  }
  void reshard(ReshardVerb verb, router::AuditActor,
               std::function<void(ReshardAnswer)> done) override {
    reshards.push_back({verb, std::move(done)});
  }
  void balance(BalanceRequest request, std::function<void(BalanceAnswer)> done) override {
    balances.push_back({std::move(request), std::move(done)});
  }
  void analyze(AnalyzeRequest request, std::function<void(AnalyzeAnswer)> done) override {
    analyses.push_back({std::move(request), std::move(done)});
  }

 private:
  [[noreturn]] static void not_in_the_fake() { throw std::logic_error("not in the fake"); }

  FakeWorkerServices& worker_;
  boost::asio::io_context io_;
  std::optional<ReloadRecord> last_reload_;
};

}  // namespace santral::test
