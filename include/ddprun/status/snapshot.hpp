#pragma once
// What `ddprun status` reads, written once for every backend: the Reader seam (the rendezvous'
// keys, state.hpp's names, from the c10d store or from an etcd-v3 run's current generation)
// and the reading of a Snapshot through it. Pure: the readers live in src/status/.

#include "ddprun/status/render.hpp"
#include "ddprun/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddprun::status {

/// Where `ddprun status` reads a rendezvous' keys.
class Reader {
 public:
  virtual ~Reader() = default;
  /// The values of `keys` ("" for a missing key), in as many requests as the backend needs.
  virtual Result<std::vector<std::string>> multi_get(std::vector<std::string> keys) = 0;
  /// A rendezvous counter (rdzv::Kv::add's); the default reads it as decimal text, as the
  /// store's ADD keeps it (0: missing or not a number).
  virtual Result<std::int64_t> counter(const std::string& key);
  /// Where it reads, for messages: "host:port", or the etcd members and the run's keys.
  virtual std::string where() const = 0;
};

/// The header of run `run_id`, the round's nodes (the members of a complete round, else the
/// slots joined so far), their heartbeats and their workers' last progress; nullopt when the
/// run has no state. An unreadable header or members list is an error.
Result<std::optional<Snapshot>> read_snapshot(Reader& reader, const std::string& run_id);

}  // namespace ddprun::status
