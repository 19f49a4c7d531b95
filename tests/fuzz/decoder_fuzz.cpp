// libFuzzer entry point: arbitrary bytes through the store Decoder (in random chunk sizes,
// with a forced or auto-detected dialect) and every decoded request through KvState.
// Build: cmake -DDDPRUN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ; run: ./decoder_fuzz
// -max_total_time=60

#include "ddprun/store/kv_state.hpp"
#include "ddprun/store/protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

constexpr std::uint64_t k_fuzz_max_key = 256;
constexpr std::uint64_t k_fuzz_max_value = 4096;
constexpr std::uint64_t k_fuzz_max_keys = 64;
constexpr std::uint64_t k_fuzz_max_request = 64 * 1024;
constexpr std::size_t k_dialect_choices = 3;
constexpr std::size_t k_conns = 3;

ddprun::store::Dialect pick_dialect(std::uint8_t b) {
  using ddprun::store::Dialect;
  switch (b % k_dialect_choices) {
    case 1:
      return Dialect::d0;
    case 2:
      return Dialect::d1;
    default:
      return Dialect::legacy_auto;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ddprun::store;
  if (size < 2) {
    return 0;
  }
  const DecodeLimits limits{k_fuzz_max_key, k_fuzz_max_value, k_fuzz_max_keys, k_fuzz_max_request};
  Decoder decoder(limits, pick_dialect(data[0]));
  const std::size_t chunk = std::size_t{data[1]} + 1;
  KvState kv(KvLimits{8, k_fuzz_max_request});
  std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  std::size_t n = 0;
  while (!rest.empty()) {
    const auto piece = rest.substr(0, chunk);
    rest.remove_prefix(piece.size());
    decoder.feed(piece);
    for (auto r = decoder.next();; r = decoder.next()) {
      if (r.status == DecodeStatus::ambiguous) {
        decoder.resolve_silence();
        continue;
      }
      if (r.status != DecodeStatus::request) {
        break;
      }
      (void)kv.apply(static_cast<ConnId>(n++ % k_conns), r.request);
    }
  }
  kv.disconnect(0);
  return 0;
}
