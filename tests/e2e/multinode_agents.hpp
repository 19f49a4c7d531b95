#pragma once
// Helpers for the multi-node end-to-end tests: several ddprun agents in one test, each on its own
// loopback address (127.0.0.2, 127.0.0.3, ... through --local_addr), every wait bounded.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.hpp"

namespace ddprun::test::multinode {

/// Bound for an agent that is expected to finish on its own.
constexpr std::chrono::milliseconds k_agent_timeout{60000};
/// Bound for a condition the test waits for while agents run (a round forming, a restart).
constexpr std::chrono::milliseconds k_event_timeout{30000};
constexpr int k_running = -2;

inline std::string worker(const std::string& name) {
  return source_path("tests/support/workers/" + name);
}

/// `127.0.0.<2 + i>`: agent i's advertised address.
inline std::string loopback(int i) { return "127.0.0." + std::to_string(2 + i); }

/// ddprun under `env -i` with a minimal environment (no scheduler variables leak in), logging
/// at INFO so the tests can see which agent hosts the store and why a round re-formed.
inline std::vector<std::string> clean_ddprun(const std::string& tag = "X=1") {
  return {"/usr/bin/env", "-i",  "PATH=/usr/bin:/bin", "HOME=/root", tag, ddprun_bin(),
          "--log_level",  "INFO"};
}

inline std::vector<std::string> concat(std::vector<std::string> a,
                                       const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Flags of one static-rendezvous agent (node 0 hosts the store on 127.0.0.1:port).
inline std::vector<std::string> static_flags(int nnodes, int node_rank, int port, int nproc,
                                             const std::string& local_addr) {
  return {"--nnodes",         std::to_string(nnodes),
          "--node_rank",      std::to_string(node_rank),
          "--master_addr",    "127.0.0.1",
          "--master_port",    std::to_string(port),
          "--local_addr",     local_addr,
          "--nproc_per_node", std::to_string(nproc)};
}

/// Flags of one c10d agent with the store endpoint host:port (127.0.0.1 unless given).
inline std::vector<std::string> c10d_flags(const std::string& nnodes, int port, int nproc,
                                           const std::string& local_addr, const std::string& conf,
                                           const std::string& host = "127.0.0.1") {
  return {"--nnodes",         nnodes,
          "--rdzv_backend",   "c10d",
          "--rdzv_endpoint",  host + ":" + std::to_string(port),
          "--rdzv_id",        "mnjob",
          "--local_addr",     local_addr,
          "--nproc_per_node", std::to_string(nproc),
          "--rdzv_conf",      conf};
}

inline bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

/// Agents started in the background; whatever still runs when this goes out of scope (a failed
/// assertion) is killed with its process group, so no test leaves agents behind.
class Agents {
 public:
  Agents() = default;
  Agents(const Agents&) = delete;
  Agents& operator=(const Agents&) = delete;
  ~Agents() {
    for (std::size_t i = 0; i < bg_.size(); ++i) {
      if (status_[i] == k_running) {
        kill(-bg_[i].pid, SIGKILL);
        wait_for(bg_[i].pid, std::chrono::seconds(10));
      }
    }
  }

  std::size_t start(const std::vector<std::string>& argv) {
    bg_.push_back(ddprun::test::start(argv));
    status_.push_back(k_running);
    return bg_.size() - 1;
  }

  /// The agent's exit status, or -1 when it did not exit within `timeout` (it is then killed).
  int wait(std::size_t i, std::chrono::milliseconds timeout = k_agent_timeout) {
    if (status_[i] != k_running) {
      return status_[i];
    }
    int s = wait_for(bg_[i].pid, timeout);
    if (s < 0) {
      kill(-bg_[i].pid, SIGKILL);
      wait_for(bg_[i].pid, std::chrono::seconds(10));
    }
    status_[i] = s;
    return s;
  }

  void signal(std::size_t i, int sig) const { kill(bg_[i].pid, sig); }
  std::string err(std::size_t i) const { return read_file(bg_[i].err_path); }
  std::string out(std::size_t i) const { return read_file(bg_[i].out_path); }
  std::size_t size() const { return bg_.size(); }

  /// Every agent's stderr, labelled, for failure messages.
  std::string all_logs() const {
    std::string s;
    for (std::size_t i = 0; i < bg_.size(); ++i) {
      s += "---- agent " + std::to_string(i) + " stderr:\n" + err(i);
    }
    return s;
  }

 private:
  std::vector<Background> bg_;
  std::vector<int> status_;
};

constexpr const char* k_hosting = "hosting the rendezvous store";

/// --rdzv_conf with a short keep-alive: a dead node (or store) is noticed after about 2 s of
/// silence.
inline const std::string k_fast_conf =
    "join_timeout=30,last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=2";

/// Flags of one etcd-v3 agent (one worker) on `endpoints` with run id `id`.
inline std::vector<std::string> etcd_flags(const std::string& nnodes, const std::string& endpoints,
                                           const std::string& id, int agent,
                                           const std::string& conf = k_fast_conf) {
  return {"--nnodes",    nnodes, "--rdzv_backend", "etcd-v3",       "--rdzv_endpoint",  endpoints,
          "--rdzv_id",   id,     "--local_addr",   loopback(agent), "--nproc_per_node", "1",
          "--rdzv_conf", conf};
}

/// `flags` with the value after `name` replaced by `value`.
inline std::vector<std::string> with_flag(std::vector<std::string> flags, const std::string& name,
                                          const std::string& value) {
  for (std::size_t i = 0; i + 1 < flags.size(); ++i) {
    if (flags[i] == name) {
      flags[i + 1] = value;
    }
  }
  return flags;
}

/// A multi-node job of a scenario shared by the c10d and the etcd-v3 tests.
struct RdzvJob {
  /// Agent i's rendezvous flags (--nnodes and the backend's).
  std::function<std::vector<std::string>(std::size_t)> flags;
  bool agent0_hosts = false;             ///< c10d: agent 0 hosts the store and starts first
  std::vector<std::string> status_args;  ///< `ddprun status` arguments (after "status")
};

/// A c10d job of `nnodes` with the store on a free port of 127.0.0.1, run id `id` (each test
/// its own), one worker per agent and k_fast_conf.
inline RdzvJob c10d_job(const std::string& nnodes, const std::string& id) {
  const int port = free_port();
  return RdzvJob{[port, id, nnodes](std::size_t i) {
                   return with_flag(
                       c10d_flags(nnodes, port, 1, loopback(static_cast<int>(i)), k_fast_conf),
                       "--rdzv_id", id);
                 },
                 true,
                 {"--rdzv_endpoint", "127.0.0.1:" + std::to_string(port), "--rdzv_id", id}};
}

/// An etcd-v3 job of `nnodes` on `endpoints` (etcd_flags), run id `id`.
inline RdzvJob etcd_job(const std::string& nnodes, const std::string& endpoints,
                        const std::string& id) {
  return RdzvJob{[endpoints, id, nnodes](std::size_t i) {
                   return etcd_flags(nnodes, endpoints, id, static_cast<int>(i));
                 },
                 false,
                 {"--rdzv_backend", "etcd-v3", "--rdzv_endpoint", endpoints, "--rdzv_id", id}};
}

/// Starts the agent that must host the store; true once it says it does.
inline bool start_host(Agents& agents, const std::vector<std::string>& argv) {
  auto i = agents.start(argv);
  return eventually([&] { return contains(agents.err(i), k_hosting); }, k_event_timeout);
}

/// One start of rounds.sh: `key=value` words as a map.
using Start = std::map<std::string, std::string>;

/// The starts rounds.sh recorded in `dir` for `local_rank`, oldest first.
inline std::vector<Start> starts(const std::string& dir, int local_rank = 0) {
  std::vector<Start> out;
  std::istringstream in(read_file(dir + "/starts_" + std::to_string(local_rank) + ".log"));
  std::string line;
  while (std::getline(in, line)) {
    Start s;
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      auto eq = w.find('=');
      if (eq != std::string::npos) {
        s[w.substr(0, eq)] = w.substr(eq + 1);
      }
    }
    out.push_back(s);
  }
  return out;
}

/// Whether the newest start recorded in `dir` has `key=value`.
inline bool last_start_has(const std::string& dir, const std::string& key,
                           const std::string& value) {
  auto s = starts(dir);
  return !s.empty() && s.back()[key] == value;
}

inline void touch(const std::string& path) { std::ofstream(path) << "go\n"; }

/// Waits (bounded) until the newest start recorded in each of `dirs` ran with `world` workers.
inline bool all_started_with_world(const std::vector<std::string>& dirs, const std::string& world) {
  return eventually(
      [&] {
        return std::all_of(dirs.begin(), dirs.end(),
                           [&](const std::string& d) { return last_start_has(d, "world", world); });
      },
      k_event_timeout);
}

/// Lets rounds.sh workers finish (`release`) and expects the first `n` agents to exit 0.
inline void release_and_expect_success(Agents& agents, const std::string& release, std::size_t n) {
  touch(release);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(agents.wait(i), 0) << agents.all_logs();
  }
}

/// The worker arguments for rounds.sh: record each start in `dir`, finish once `release` exists.
inline std::vector<std::string> rounds(const std::string& dir, const std::string& release,
                                       const std::string& mode = "") {
  std::vector<std::string> w{"--no_python", worker("rounds.sh"), dir, release};
  if (!mode.empty()) {
    w.push_back(mode);
  }
  return w;
}

}  // namespace ddprun::test::multinode
