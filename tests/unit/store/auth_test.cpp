// Rendezvous authentication as pure functions: which requests an unauthenticated connection
// may make, the handshake from both sides, and where an agent's token comes from.

#include "ddprun/store/auth.hpp"

#include "ddprun/store/kv_state.hpp"

#include <gtest/gtest.h>

namespace ddprun::store {
namespace {

const std::string k_client_nonce(64, 'c');
const std::string k_server_nonce(64, '5');

Request cas(std::string_view key, std::string expected) {
  return Request{Op::compare_set, std::string(key), std::move(expected)};
}

/// Runs the whole exchange; returns the client's verdict and leaves the server state in `st`.
Result<void> handshake(const std::string& client_token, const std::string& server_token,
                       ServerAuthState& st) {
  auto hello =
      server_auth_step(server_token, st, cas(k_auth_hello_key, k_client_nonce), k_server_nonce);
  auto proof = check_hello_reply(client_token, k_client_nonce, hello.reply, "h:1");
  if (!proof) {
    return proof.error();
  }
  auto done = server_auth_step(server_token, st, cas(k_auth_proof_key, *proof), "unused");
  return check_final_reply(done.reply, "h:1");
}

TEST(StoreAuth, ProtectsOnlyTheDdprunPrefix) {
  EXPECT_TRUE(is_protected_key("ddprun/rdzv/job/state"));
  EXPECT_FALSE(is_protected_key("/worker/attempt_0/0"));
  EXPECT_FALSE(is_protected_key("torchelastic/x"));
  EXPECT_FALSE(is_protected_key("ddprun"));
}

TEST(StoreAuth, RefusesEveryOperationOnProtectedKeys) {
  EXPECT_TRUE(access_denial(Request{Op::get, "ddprun/rdzv/a/state"}));
  EXPECT_TRUE(access_denial(Request{Op::set, "ddprun/x", "v"}));
  EXPECT_TRUE(access_denial(cas("ddprun/x", "")));
  EXPECT_TRUE(access_denial(Request{Op::watch_key, "ddprun/x"}));
  EXPECT_TRUE(access_denial(Request{Op::delete_key, "ddprun/x"}));
  Request wait{Op::wait};
  wait.keys = {"/ok", "ddprun/x"};
  EXPECT_TRUE(access_denial(wait));
  Request mset{Op::multi_set};
  mset.pairs = {{"/ok", "1"}, {"ddprun/x", "2"}};
  EXPECT_TRUE(access_denial(mset));
}

TEST(StoreAuth, AllowsWorkerKeysAndKeyListings) {
  EXPECT_FALSE(access_denial(Request{Op::set, "/worker/0", "v"}));
  Request wait{Op::wait};
  wait.keys = {"/a", "/b"};
  EXPECT_FALSE(access_denial(wait));
  EXPECT_FALSE(access_denial(Request{Op::list_keys}));
  EXPECT_FALSE(access_denial(Request{Op::get_num_keys}));
}

TEST(StoreAuth, DenialNamesOperationAndTruncatedKeyNeverTheValue) {
  const std::string long_key = "ddprun/" + std::string(500, 'k');
  auto reason = access_denial(Request{Op::set, long_key, "secret-value"});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("without rendezvous authentication"), std::string::npos);
  EXPECT_EQ(reason->find("secret-value"), std::string::npos);
  EXPECT_EQ(reason->find(long_key), std::string::npos);
}

TEST(StoreAuth, HandshakeWithTheSameTokenAuthenticates) {
  ServerAuthState st;
  EXPECT_TRUE(handshake("tok", "tok", st));
  EXPECT_TRUE(st.authenticated);
}

TEST(StoreAuth, ClientRejectsAServerWithAnotherToken) {
  ServerAuthState st;
  auto r = handshake("mine", "theirs", st);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("rendezvous at h:1 uses a different token"), std::string::npos);
  EXPECT_FALSE(st.authenticated);
}

TEST(StoreAuth, ServerRejectsAWrongProofWithAWarning) {
  ServerAuthState st;
  server_auth_step("tok", st, cas(k_auth_hello_key, k_client_nonce), k_server_nonce);
  const auto forged = client_proof("guess", k_client_nonce, k_server_nonce);
  auto step = server_auth_step("tok", st, cas(k_auth_proof_key, forged), "unused");
  EXPECT_EQ(step.reply, k_auth_denied_reply);
  ASSERT_TRUE(step.warning);
  EXPECT_EQ(*step.warning, "wrong rendezvous token");
  EXPECT_FALSE(st.authenticated);
  EXPECT_FALSE(check_final_reply(step.reply, "h:1"));
}

TEST(StoreAuth, ProofIsBoundToTheChallenge) {
  ServerAuthState st;
  server_auth_step("tok", st, cas(k_auth_hello_key, k_client_nonce), k_server_nonce);
  // A proof recorded for another server nonce (a replay) does not verify.
  const auto replayed = client_proof("tok", k_client_nonce, std::string(64, '6'));
  EXPECT_EQ(server_auth_step("tok", st, cas(k_auth_proof_key, replayed), "x").reply,
            k_auth_denied_reply);
  ServerAuthState fresh;
  EXPECT_EQ(server_auth_step("tok", fresh, cas(k_auth_proof_key, replayed), "x").reply,
            k_auth_denied_reply);
}

TEST(StoreAuth, ClientRejectsAStoreWithoutToken) {
  // A store without a token answers the hello like any missing key: it echoes `expected`.
  auto r = check_hello_reply("tok", k_client_nonce, k_client_nonce, "h:1");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not require a rendezvous token"), std::string::npos);
  EXPECT_FALSE(check_hello_reply("tok", k_client_nonce, "garbage", "h:1"));
}

TEST(StoreAuth, ProbeTellsATokenlessClientWhatIsMissing) {
  ServerAuthState st;
  auto step = server_auth_step("tok", st, cas(k_auth_probe_key, "probe"), "n");
  auto r = check_probe_reply(step.reply, "h:29400");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("rendezvous at h:29400 requires a token; ", 0), 0U);
  EXPECT_TRUE(check_probe_reply(std::string(k_auth_probe_value), "h:1"));  // tokenless store
  EXPECT_TRUE(is_auth_request(cas(k_auth_probe_key, "probe")));
  EXPECT_FALSE(is_auth_request(Request{Op::get, std::string(k_auth_probe_key)}));
}

TEST(StoreAuth, MalformedHelloIsDenied) {
  ServerAuthState st;
  auto step = server_auth_step("tok", st, cas(k_auth_hello_key, "short"), k_server_nonce);
  EXPECT_EQ(step.reply, k_auth_denied_reply);
  EXPECT_TRUE(step.warning);
}

TEST(StoreAuthToken, PrecedenceFileThenEnvThenJobFile) {
  const util::Env env{{"DDPRUN_RDZV_TOKEN", "from-env"}};
  const JobTokenDir slurm{"42", "/home/u/run", "SLURM_SUBMIT_DIR"};
  auto file = decide_token_source({{"token_file", "/t"}}, env, slurm);
  EXPECT_EQ(file.kind, TokenKind::file);
  EXPECT_EQ(file.path, "/t");
  auto from_env = decide_token_source({}, env, slurm);
  EXPECT_EQ(from_env.kind, TokenKind::env);
  EXPECT_EQ(from_env.value, "from-env");
  auto job = decide_token_source({}, util::Env{}, slurm);
  EXPECT_EQ(job.kind, TokenKind::job_file);
  EXPECT_EQ(job.path, "/home/u/run/.ddprun/token");
  EXPECT_EQ(job.job_id, "42");
  EXPECT_EQ(job.origin, "$SLURM_SUBMIT_DIR/.ddprun/token");
  EXPECT_EQ(decide_token_source({}, util::Env{}, std::nullopt).kind, TokenKind::none);
}

TEST(StoreAuthToken, PbsJobFile) {
  auto job =
      decide_token_source({}, util::Env{}, JobTokenDir{"7.server", "/scratch/w", "PBS_O_WORKDIR"});
  EXPECT_EQ(job.kind, TokenKind::job_file);
  EXPECT_EQ(job.path, "/scratch/w/.ddprun/token");
  EXPECT_EQ(job.job_id, "7.server");
}

TEST(StoreAuthToken, JobTokenDiffersPerJob) {
  EXPECT_NE(derive_job_token("secret", "1"), derive_job_token("secret", "2"));
  EXPECT_EQ(derive_job_token("secret", "1"), derive_job_token("secret", "1"));
  EXPECT_EQ(derive_job_token("secret", "1").size(), 64U);
}

TEST(StoreAuthToken, FileModeMustHideTheToken) {
  EXPECT_FALSE(token_mode_problem("/t", 0100600));
  EXPECT_FALSE(token_mode_problem("/t", 0100400));
  auto problem = token_mode_problem("/t", 0100640);
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem,
            "token file '/t' has mode 0640: it must not be readable by the group or others "
            "(chmod 600 /t)");
  EXPECT_TRUE(token_mode_problem("/t", 0100604));
}

TEST(StoreAuthToken, NormalizeDropsTheNewlineAndRejectsEmpty) {
  EXPECT_EQ(*normalize_token("abc\n", "x"), "abc");
  auto empty = normalize_token(" \n", "DDPRUN_RDZV_TOKEN");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "rendezvous token from DDPRUN_RDZV_TOKEN is empty");
}

TEST(StoreAuthKv, HiddenPrefixLeavesProtectedKeysOutOfListings) {
  KvState kv;
  kv.apply(1, Request{Op::set, "ddprun/rdzv/a/state", "s"});
  kv.apply(1, Request{Op::set, "/w", "v"});
  auto all = kv.apply(2, Request{Op::get_num_keys});
  auto hidden = kv.apply(2, Request{Op::get_num_keys}, k_protected_prefix);
  EXPECT_EQ(get_u64(all.reply), 2U);
  EXPECT_EQ(get_u64(hidden.reply), 1U);
  auto listed = kv.apply(2, Request{Op::list_keys}, k_protected_prefix);
  std::string expected;
  put_i64(expected, 1);
  put_bytes(expected, "/w");
  EXPECT_EQ(listed.reply, expected);
}

}  // namespace
}  // namespace ddprun::store
