#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "placement/topology.h"
#include "router/cluster/fleet_agent.h"
#include "router/hotkeys/salting/auto_salt.h"
#include "router/hotkeys/salting/salt_overrides_json.h"
#include "router/hotkeys/salting/salting_state_file.h"
#include "router/process/worker.h"
#include "router/runtime/shared_state.h"

namespace santral::router {

// Salting made at run time, on the server's thread: hotkeys.auto_salt's loop, the fleet's
// salting in etcd (SANTRAL SALT/UNSALT in a fleet wait until every router took it), and, for a
// router alone, hotkeys.state_file, which keeps it across restarts.
class RunTimeSalting {
 public:
  // `topology`: the server's topology in force; `fleet`: null outside a fleet.
  RunTimeSalting(boost::asio::io_context& io, SharedState& shared,
                 const std::vector<std::unique_ptr<Worker>>& workers,
                 const placement::TopologyPtr& topology, FleetAgent* fleet)
      : io_(io),
        shared_(shared),
        workers_(workers),
        topology_(topology),
        fleet_(fleet),
        timer_(io) {}

  // hotkeys.auto_salt: every check_ms, merges the workers' rates and salts or unsalts what
  // AutoSalting decides, on the first worker (as SANTRAL SALT/UNSALT would).
  void start() { check_auto_salting(); }
  void stop();
  // A router alone, before the workers start: opens hotkeys.state_file and salts again what
  // earlier runs salted and did not fold back. "" or why the router must not start.
  std::string restore(const std::filesystem::path& config_path);

  // Fleet (ControlPlane::share_salting): makes `change` on the fleet's salting in etcd and
  // answers once every live router acknowledged it.
  void share(SaltChange change, std::function<void(std::string)> done);
  // A salting version read from etcd.
  void take_fleet_salting(const EtcdKeyValue& salting);
  // Answers the shares every router has taken, or whose time ran out.
  void check_waiters();

 private:
  void check_auto_salting();

  boost::asio::io_context& io_;
  SharedState& shared_;
  const std::vector<std::unique_ptr<Worker>>& workers_;
  const placement::TopologyPtr& topology_;
  FleetAgent* fleet_;
  boost::asio::steady_timer timer_;
  AutoSalting auto_salting_;
  bool stopped_ = false;
  // share() calls waiting until every router has acknowledged their salting version.
  struct Waiter {
    std::int64_t version;
    std::function<void(std::string)> done;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<Waiter> waiters_;
  std::unique_ptr<SaltingStateFile> file_;  // a router alone; shared_.salting_file points to it
};

}  // namespace santral::router
