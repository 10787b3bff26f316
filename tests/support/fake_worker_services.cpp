#include "tests/support/fake_worker_services.h"

#include <algorithm>
#include <stdexcept>

#include "config/config.h"
#include "router/runtime/request_context.h"
#include "router/tracking/tracking_lanes.h"

namespace santral::test {

namespace {

[[noreturn]] void not_in_the_fake() {
  throw std::logic_error("not in the fake");
}

}  // namespace

FakeWorkerServices::FakeWorkerServices(const std::string& yaml)
    : topology_(placement::make_topology(config::parse_config(yaml, "fake.yaml"), 1)),
      hotkeys_(topology_->config->hotkeys, std::chrono::steady_clock::now()) {
  salts_.rebuild(topology_->config, topology_->map, nullptr, nullptr);
  peers_.push_back(this);
  provide({.io = &io_,
           .topology = &topology_,
           .shared = &shared_,
           .stats = &stats_,
           .scripts = &scripts_,
           .hotkeys = &hotkeys_,
           .salts = &salts_,
           .learned = &learned_,
           .migrations = &migrations_});
}

FakeWorkerServices::~FakeWorkerServices() {
  close_pool();
  if (lanes_) lanes_->stop();
}

void FakeWorkerServices::serve(placement::TopologyPtr topology) {
  topology_ = std::move(topology);
  if (pool_) pool_->apply(*topology_);
  if (lanes_) lanes_->apply(topology_);
}

void FakeWorkerServices::close_pool() {
  if (pool_) pool_->stop();
  pool_.reset();
}

router::ConnectionPool& FakeWorkerServices::pool() {
  if (!pool_) {
    pool_ = std::make_unique<router::ConnectionPool>(connections_io_, stats_,
                                                     shared_.replica_freshness);
    pool_->apply(*topology_);
  }
  return *pool_;
}

void FakeWorkerServices::for_each_client(
    const std::function<void(router::RequestContext&)>& visit) {
  for (auto* client : clients_) visit(*client);
}

void FakeWorkerServices::forget(router::RequestContext& client) {
  std::erase(clients_, &client);
}

router::InputPool& FakeWorkerServices::inputs() {
  not_in_the_fake();
}
void FakeWorkerServices::input_changed(std::size_t, std::size_t) {
  not_in_the_fake();
}
router::TrackingConnections& FakeWorkerServices::near_cache_connections() {
  not_in_the_fake();
}
// Real lanes, opened on first use; their connections are never run. They tell the clients of
// this worker that are TrackingClients (FakeRequestContext is one), found by id.
router::TrackingLanes& FakeWorkerServices::lanes() {
  if (!lanes_) {
    lanes_ = std::make_unique<router::TrackingLanes>(
        connections_io_, stats_, [this](std::uint64_t id) -> router::TrackingClient* {
          for (auto* client : clients_)
            if (client->state().id == id) return dynamic_cast<router::TrackingClient*>(client);
          return nullptr;
        });
    lanes_->apply(topology_);
  }
  return *lanes_;
}
void FakeWorkerServices::refresh_salts() {
  not_in_the_fake();
}
void FakeWorkerServices::hold_pull(router::RequestContext& client, std::uint64_t slot,
                                   std::vector<router::PullGroup> groups) {
  held.push_back({&client, slot, std::move(groups)});
}
void FakeWorkerServices::redirect_invalidation(std::uint64_t, std::uint64_t, unsigned,
                                               std::string) {
  not_in_the_fake();
}

}  // namespace santral::test
