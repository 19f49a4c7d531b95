// The etcd-v3 Reader: the agents' own pieces, read-only. The client's options come from
// rdzv::etcd_client_options, the generation from the run's generation key (etcd_layout.hpp),
// the keys through rdzv::EtcdKv under that generation's prefix, and with a token through
// rdzv::SignedKv, which checks and strips each value's signature. Every call runs to its end
// on this reader's own io_context (net::run_now); the client bounds each one.

#include "ddprun/etcd/client.hpp"
#include "ddprun/net/run_now.hpp"
#include "ddprun/rdzv/etcd_kv.hpp"
#include "ddprun/rdzv/etcd_layout.hpp"
#include "ddprun/rdzv/etcd_options.hpp"
#include "ddprun/rdzv/signed_kv.hpp"

#include <fmt/format.h>

#include <exception>

#include "readers.hpp"

namespace ddprun::status {
namespace {

class EtcdReader final : public Reader {
 public:
  EtcdReader() = default;

  Result<void> make_client(etcd::ClientOptions options) {
    const std::string members = etcd::to_string(options.endpoints);
    auto client = etcd::Client::make(io_, std::move(options));
    if (!client) {
      return make_error(ErrorCode::config,
                        fmt::format("etcd at {}: {}", members, client.error().message));
    }
    client_ = std::move(*client);
    return {};
  }

  /// Reads the run's generation key; without a generation every key reads as missing.
  Result<void> find_generation(const std::string& key_prefix, const std::string& run_id,
                               const std::optional<std::string>& token) {
    const std::string run_prefix = rdzv::etcd_run_prefix(key_prefix, run_id);
    const std::string members = etcd::to_string(client_->options().endpoints);
    auto seen = run(client_->get(rdzv::etcd_generation_key(run_prefix)));
    if (!seen) {
      return make_error(ErrorCode::io,
                        fmt::format("cannot reach etcd at {}: {}", members, seen.error().message));
    }
    const auto generation = *seen ? rdzv::parse_generation((*seen)->value) : std::nullopt;
    if (!generation) {
      where_ = fmt::format("etcd {} under {}", members, run_prefix);
      return {};
    }
    const std::string prefix = rdzv::etcd_generation_prefix(run_prefix, *generation);
    where_ = fmt::format("etcd {} under {}", members, prefix);
    etcd_kv_ = std::make_unique<rdzv::EtcdKv>(*client_, prefix);
    if (token) {
      signed_kv_ = std::make_unique<rdzv::SignedKv>(*etcd_kv_, *token);
    }
    return {};
  }

  Result<std::vector<std::string>> multi_get(std::vector<std::string> keys) override {
    if (!etcd_kv_) {
      return std::vector<std::string>(keys.size());
    }
    if (signed_kv_) {
      return run(signed_kv_->multi_get_now(std::move(keys)));
    }
    auto values = run(etcd_kv_->multi_get_now(keys));
    if (!values) {
      return values.error();
    }
    for (std::size_t i = 0; i < values->size(); ++i) {
      if (rdzv::is_signed_entry((*values)[i])) {
        return make_error(ErrorCode::config,
                          fmt::format("rendezvous entry \"{}\" is signed: the agents use a "
                                      "rendezvous token; give it here too (--rdzv_conf "
                                      "token_file=PATH or DDPRUN_RDZV_TOKEN)",
                                      keys[i]));
      }
    }
    return values;
  }

  /// The etcd Kv counts a counter's keys (rdzv::EtcdKv::add); nothing is signed there.
  Result<std::int64_t> counter(const std::string& key) override {
    if (!etcd_kv_) {
      return std::int64_t{0};
    }
    return run(etcd_kv_->add(key, 0));
  }

  std::string where() const override { return where_; }

 private:
  template <typename T>
  Result<T> run(asio::awaitable<Result<T>> call) {
    try {
      return net::run_now(io_, std::move(call));
    } catch (const std::exception& e) {
      return make_error(ErrorCode::internal, fmt::format("etcd call failed: {}", e.what()));
    }
  }

  asio::io_context io_;  // first: outlives everything that uses it
  std::unique_ptr<etcd::Client> client_;
  std::unique_ptr<rdzv::EtcdKv> etcd_kv_;
  std::unique_ptr<rdzv::SignedKv> signed_kv_;
  std::string where_;
};

}  // namespace

Result<std::unique_ptr<Reader>> open_etcd_reader(const config::EtcdSettings& settings,
                                                 const std::string& run_id,
                                                 const std::optional<std::string>& token,
                                                 std::chrono::milliseconds timeout) {
  auto options = rdzv::etcd_client_options(settings);
  if (!options) {
    return options.error();
  }
  options->call_timeout = timeout;
  auto reader = std::make_unique<EtcdReader>();
  if (auto ok = reader->make_client(std::move(*options)); !ok) {
    return ok.error();
  }
  if (auto ok = reader->find_generation(settings.key_prefix, run_id, token); !ok) {
    return ok.error();
  }
  return std::unique_ptr<Reader>(std::move(reader));
}

}  // namespace ddprun::status
