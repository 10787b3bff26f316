#include "router/cluster/proposals.h"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "router/cluster/put_on_version.h"

namespace santral::router {

namespace {

std::string read_modify_write(EtcdClient& etcd, const Proposals::Update& update,
                              std::int64_t& revision) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto current = etcd.range(update.key);
    std::string value = current.kvs.empty() ? std::string() : current.kvs.front().value;
    std::int64_t expected = current.kvs.empty() ? 0 : current.kvs.front().mod_revision;
    if (auto written = etcd.put_if(update.key, update.change(value), expected)) {
      revision = *written;
      return {};
    }
  }
  return "other routers kept changing it; try again";
}

struct Carry {
  EtcdClient& etcd;
  std::int64_t& revision;

  std::string operator()(const Proposals::Put& put) const {
    return put_on_version(etcd, put.key, put.value, put.expected, revision);
  }
  std::string operator()(const Proposals::Update& update) const {
    return read_modify_write(etcd, update, revision);
  }
  std::string operator()(const Proposals::Call& call) const { return call.action(etcd, revision); }
};

}  // namespace

void Proposals::add(Proposal proposal, Done done) {
  std::lock_guard guard(mutex_);
  jobs_.push_back({std::move(proposal), std::move(done)});
}

std::size_t Proposals::carry_out(EtcdClient& etcd, boost::asio::io_context& home) {
  std::deque<Job> jobs;
  {
    std::lock_guard guard(mutex_);
    jobs.swap(jobs_);
  }
  for (auto& job : jobs) {
    std::int64_t revision = 0;
    std::string error;
    try {
      error = std::visit(Carry{etcd, revision}, job.proposal);
    } catch (const EtcdUnavailable& e) {
      error = fmt::format(
          "etcd did not answer ({}); the change may or may not have been made: look at what is "
          "in force before trying again",
          e.what());
    }
    boost::asio::post(home,
                      [done = std::move(job.done), revision, error] { done(revision, error); });
  }
  return jobs.size();
}

}  // namespace santral::router
