// qpcheck gate, show and diff end to end: the shipped specs' expectations, unexpected outcomes, coverage and
// vacuity, the JUnit and SARIF reports validated against their schemas (xmllint, python3-jsonschema), the message
// sequence chart rendered in headless Chromium, and the verdict changes between the "today" and "2021 patch" specs.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/cli/diff.h"
#include "checker/cli/gate.h"
#include "checker/cli/show.h"
#include "checker/cli/verify.h"

namespace qpcheck {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Run {
  int rc;
  std::string out, err;
};

Run gate(std::vector<std::string> paths, cli::GateOptions o = {}) {
  o.paths = std::move(paths);
  o.format = cli::Format::kJson;
  std::ostringstream out, err;
  int rc = cli::run_gate(o, out, err);
  return Run{rc, out.str(), err.str()};
}

fs::path tmp_dir() {
  const char* t = std::getenv("TEST_TMPDIR");
  fs::path p = fs::path(t ? t : "/tmp") / "gate_test";
  fs::create_directories(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const json& config(const json& summary, const std::string& spec, const std::string& name) {
  for (const json& s : summary["specs"]) {
    if (s["spec"] != spec) continue;
    for (const json& c : s["configurations"]) {
      if (c["name"] == name) return c;
    }
  }
  FAIL("no configuration " << name << " of " << spec);
  static json none;
  return none;
}

const json& property(const json& config, const std::string& name) {
  for (const json& p : config["properties"]) {
    if (p["name"] == name) return p;
  }
  FAIL("no property " << name);
  static json none;
  return none;
}

int sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST_CASE("gate over spec/: every shipped expectation holds, with exact verdicts, lengths and coverage") {
  Run r = gate({"spec"});
  INFO("stderr: ", r.err);
  CHECK(r.rc == 0);
  json s = json::parse(r.out);
  CHECK(s["schema"] == "qpcheck.gate");
  CHECK(s["verdict"] == "pass");
  CHECK(s["counts"]["specs"] == 23);
  CHECK(s["counts"]["configurations"] == 85);
  CHECK(s["counts"]["checks"] == 1639);
  CHECK(s["counts"]["as_expected"] == 1639);
  CHECK(s["counts"]["new_violations"] == 0);
  CHECK(s["counts"]["vacuous"] == 375);

  // A liveness property is a check like the others: its expectation, its lasso (prefix and cycle) as the
  // counterexample, its fairness; and where it holds, no counterexample.
  const json& livelock = config(s, "spec/18_rnr_retry_livelock.qpspec", "verbs_rnr_retry=7 repost=false");
  const json& nak = property(livelock, "sends_complete");
  CHECK(nak["kind"] == "liveness");
  CHECK(nak["actual"] == "violated");
  CHECK(nak["status"] == "as-expected");
  CHECK(nak["counterexample"]["steps"].size() == 19);
  CHECK(nak["counterexample"]["cycle"] == json{{"start", 19}, {"length", 1}});
  CHECK(nak["counterexample"]["version"] == 2);
  CHECK(property(config(s, "spec/18_rnr_retry_livelock.qpspec", "verbs_rnr_retry=3 repost=false"),
                 "sends_complete")["actual"] == "holds");
  for (const json& c : s["specs"]) {
    if (c["spec"] != "spec/19_connect_settles.qpspec") continue;
    CHECK(c["configurations"].size() == 8);
    for (const json& cfg : c["configurations"]) {
      CHECK(property(cfg, "connection_settles")["actual"] == "holds");
      CHECK(property(cfg, "connect_answered")["actual"] == "holds");
    }
  }

  const json& seed = config(s, "spec/03_patch_passive_first_ib.qpspec", "transport=IB connect_rnr_retry=0");
  CHECK(seed["stats"]["states"] == 125);  // every reachable state: the search does not stop at violations
  CHECK(property(seed, "passive_send_after_peer_recv")["actual"] == "violated");
  CHECK(property(seed, "passive_send_after_peer_recv")["counterexample"]["steps"].size() == 10);
  CHECK(property(seed, "no_send_to_empty_rq")["counterexample"]["steps"].size() == 10);
  CHECK(property(seed, "no_fatal_qp_error")["counterexample"]["steps"].size() == 10);
  CHECK(property(seed, "deadlock")["counterexample"]["steps"].size() == 16);
  CHECK(property(seed, "recv_before_wakeup")["actual"] == "holds");
  CHECK(property(seed, "recv_before_wakeup")["expected_at"].is_null());
  CHECK(property(seed, "deadlock")["expected_at"]["line"] == 62);

  const json& rnr7 = config(s, "spec/03_patch_passive_first_ib.qpspec", "transport=IB connect_rnr_retry=7");
  CHECK(property(rnr7, "passive_send_after_peer_recv")["actual"] == "violated");
  CHECK(property(rnr7, "deadlock")["actual"] == "holds");  // the RNR NAKs are retried until the receive is posted

  // Coverage: with STRICT creation the client fails at its first post_recv; only 2 of 124 actions ever fire.
  const json& strict = config(s, "spec/06_today_strict_create.qpspec", "qp_create=STRICT");
  CHECK(strict["coverage"]["actions"] == 124);
  CHECK(strict["coverage"]["actions_fired"] == 2);
  CHECK(strict["coverage"]["statements_never_executed"].size() == 14);
  CHECK(property(strict, "recv_before_wakeup")["vacuous"] == true);

  // Vacuity: no ibv_modify_qp is ever called (the CM moves the QPs), so no_illegal_modify_qp cannot fail.
  const json& client_first = config(s, "spec/02_patch_client_first.qpspec", "transport=IB connect_rnr_retry=0");
  CHECK(property(client_first, "no_illegal_modify_qp")["vacuous"] == true);
  CHECK(property(client_first, "no_fatal_qp_error")["vacuous"] == false);  // not an implication
  CHECK(property(client_first, "recv_before_wakeup")["vacuous"] == false);
  CHECK(property(client_first, "passive_send_after_peer_recv")["vacuous"] == false);  // not an implication
}

TEST_CASE("header expectations (// expect:) agree with the spec-level ones for the spec's own configuration") {
  Run g = gate({"spec"});
  json s = json::parse(g.out);
  int checked = 0;
  for (const auto& e : fs::directory_iterator("spec")) {
    if (e.path().extension() != ".qpspec") continue;
    INFO("spec: ", e.path().string());
    std::string header = slurp(e.path());
    size_t p = header.find("// expect: verdict=");
    REQUIRE(p != std::string::npos);
    std::istringstream line(header.substr(p + 11, header.find('\n', p) - p - 11));
    std::map<std::string, std::string> kv;
    std::string tok;
    while (line >> tok) kv[tok.substr(0, tok.find('='))] = tok.substr(tok.find('=') + 1);
    cli::VerifyOptions vo;
    vo.file = e.path().string();
    vo.format = cli::Format::kJson;
    std::ostringstream out, err;
    cli::run_verify(vo, out, err);
    json params = json::parse(out.str())["params"];
    const json* match = nullptr;
    for (const json& sp : s["specs"]) {
      if (sp["spec"] != e.path().string()) continue;
      for (const json& c : sp["configurations"]) {
        if (c["params"] == params) match = &c;
      }
    }
    REQUIRE_MESSAGE(match != nullptr, "the spec's own configuration is not in its matrix");
    for (const json& prop : (*match)["properties"]) {
      bool named = kv.count("property") && prop["name"] == kv["property"];
      if (kv["verdict"] == "holds") CHECK(prop["expected"] == "holds");
      if (named) CHECK(prop["expected"] == "violated");
    }
    ++checked;
  }
  CHECK(checked == 23);
}

TEST_CASE("unexpected outcomes fail the gate: a new violation and a violation that no longer happens") {
  Run r = gate({"tests/gate/unexpected.qpspec"});
  CHECK(r.rc == 1);
  json s = json::parse(r.out);
  CHECK(s["verdict"] == "fail");
  CHECK(s["counts"]["new_violations"] == 1);
  CHECK(s["counts"]["no_longer_violated"] == 1);
  const json& n1 = config(s, "tests/gate/unexpected.qpspec", "n=1");
  const json& n2 = config(s, "tests/gate/unexpected.qpspec", "n=2");
  CHECK(property(n1, "small")["status"] == "no-longer-violated");
  CHECK(property(n1, "small")["expected_at"]["line"] == 17);
  CHECK(property(n2, "small")["status"] == "new-violation");
  CHECK(property(n2, "small")["counterexample"]["steps"].size() == 1);

  // Text summary names both.
  cli::GateOptions o;
  o.paths = {"tests/gate/unexpected.qpspec"};
  std::ostringstream out, err;
  CHECK(cli::run_gate(o, out, err) == 1);
  CHECK(out.str().find("NEW VIOLATION: small in tests/gate/unexpected.qpspec [n=2]") != std::string::npos);
  CHECK(out.str().find("NO LONGER VIOLATED: small in tests/gate/unexpected.qpspec [n=1]") != std::string::npos);

  // An invalid spec is exit class 3 even next to good ones; a missing path is a usage error.
  Run bad = gate({"spec/02_patch_client_first.qpspec", "tests/bad/35_expect_bad_verdict.qpspec"});
  CHECK(bad.rc == 3);
  CHECK(bad.err.find("35_expect_bad_verdict.qpspec:8:15: error: unknown verdict 'fails'") != std::string::npos);
  CHECK(gate({"no/such/dir"}).rc == 4);

  // A limit that leaves properties undecided: inconclusive, exit 2, never "holds".
  cli::GateOptions limited;
  limited.max_states = 10;
  Run lim = gate({"spec/03_patch_passive_first_ib.qpspec"}, limited);
  CHECK(lim.rc == 2);
  json l = json::parse(lim.out);
  CHECK(l["verdict"] == "inconclusive");
  CHECK(l["counts"]["inconclusive"] == 76);
  CHECK(config(l, "spec/03_patch_passive_first_ib.qpspec", "transport=IB connect_rnr_retry=0")["limit"] == "max-states");
}

TEST_CASE("COMM_EST for a Send that is RNR-NAKed: the same step violates no_send_to_empty_rq and comm_est_never") {
  // tests/gate/comm_est_rnr.qpspec: a Send reaches a QP still in RTR with no receive posted (lib/verbs.qpspec
  // request_arrives in rnr_nak: hfi1/qib raise IBV_EVENT_COMM_EST before they look for a receive WQE).
  Run r = gate({"tests/gate/comm_est_rnr.qpspec"});
  INFO("stderr: ", r.err);
  CHECK(r.rc == 0);
  json s = json::parse(r.out);
  const json& rtr = config(s, "tests/gate/comm_est_rnr.qpspec", "comm_est_event=IN_RTR");
  for (const char* p : {"no_send_to_empty_rq", "comm_est_never"}) {
    CAPTURE(p);
    REQUIRE(property(rtr, p)["actual"] == "violated");
    const json& steps = property(rtr, p)["counterexample"]["steps"];
    CHECK(steps.size() == 9);
    CHECK(steps.back()["actor"] == "rnr_nak(e=PASSIVE)");
  }
  const json& never = config(s, "tests/gate/comm_est_rnr.qpspec", "comm_est_event=NEVER");  // rxe
  CHECK(property(never, "comm_est_never")["actual"] == "holds");
  CHECK(property(never, "no_send_to_empty_rq")["actual"] == "violated");
  CHECK(property(never, "deadlock")["actual"] == "holds");  // rnr_retry 7: the NAKs are retried for ever
}

TEST_CASE("vacuity and statements never executed") {
  Run r = gate({"tests/gate/vacuous.qpspec"});
  INFO("stderr: ", r.err);
  CHECK(r.rc == 0);
  json s = json::parse(r.out);
  const json& c = config(s, "tests/gate/vacuous.qpspec", "default");
  CHECK(property(c, "alarm_means_big")["vacuous"] == true);
  CHECK(property(c, "alarm_means_big")["vacuity"] == "its antecedent 'alarm' is false in every reachable state");
  CHECK(property(c, "bounded")["vacuous"] == false);
  CHECK(property(c, "too_big")["vacuous"] == true);
  CHECK(property(c, "deadlock")["actual"] == "holds");
  REQUIRE(c["coverage"]["statements_never_executed"].size() == 2);
  CHECK(c["coverage"]["statements_never_executed"][0]["line"] == 16);
  CHECK(c["coverage"]["statements_never_executed"][1]["line"] == 17);
  CHECK(c["coverage"]["actions"] == 3);
  CHECK(c["coverage"]["actions_fired"] == 1);

  cli::GateOptions o;
  o.no_coverage = true;
  json off = json::parse(gate({"tests/gate/vacuous.qpspec"}, o).out);
  CHECK(property(config(off, "tests/gate/vacuous.qpspec", "default"), "alarm_means_big")["vacuous"] == false);
}

TEST_CASE("a report on '-' is refused (exit 4): stdout carries the summary, and no file named '-' appears") {
  for (const char* which : {"junit", "sarif", "json"}) {
    cli::GateOptions o;
    (std::string(which) == "junit" ? o.junit : std::string(which) == "sarif" ? o.sarif : o.json) = "-";
    Run r = gate({"spec/01_linux_today.qpspec"}, o);
    CAPTURE(which);
    CHECK(r.rc == 4);
    CHECK(r.out.empty());
    CHECK(r.err == fmt::format("qpcheck: error: --{0} -: stdout carries the summary; give --{0} a file (for the JSON "
                               "summary on stdout, use --format json)\n", which));
    CHECK(!std::filesystem::exists("-"));
  }
}

TEST_CASE("JUnit validates against tests/schemas/junit.xsd and SARIF against the SARIF 2.1.0 schema") {
  fs::path dir = tmp_dir();
  cli::GateOptions o;
  o.junit = (dir / "gate.xml").string();
  o.sarif = (dir / "gate.sarif").string();
  o.json = (dir / "gate.json").string();
  Run r = gate({"spec", "tests/gate/unexpected.qpspec"}, o);
  CHECK(r.rc == 1);
  CHECK(sh("xmllint --noout --schema tests/schemas/junit.xsd " + o.junit) == 0);
  std::string validate = "/usr/bin/python3 -c \"import json,sys,jsonschema; "
                         "jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))\" "
                         "third_party/sarif/sarif-schema-2.1.0.json ";
  CHECK(sh(validate + o.sarif) == 0);

  // The validators do reject what is wrong (so the checks above can fail).
  std::string xml = slurp(o.junit);
  size_t p = xml.find(" classname=");
  std::ofstream(dir / "broken.xml") << xml.substr(0, p) << xml.substr(xml.find('"', xml.find('"', p) + 1) + 1);
  CHECK(sh("xmllint --noout --schema tests/schemas/junit.xsd " + (dir / "broken.xml").string() + " 2>/dev/null") != 0);
  json sarif = json::parse(slurp(o.sarif));
  json broken = sarif;
  broken["runs"][0]["results"][0]["level"] = "fatal";
  std::ofstream(dir / "broken.sarif") << broken.dump();
  CHECK(sh(validate + (dir / "broken.sarif").string() + " 2>/dev/null") != 0);

  // JUnit: one testcase per spec x configuration x property; the counterexample in the failure text.
  CHECK(xml.find("tests=\"1645\" failures=\"2\" errors=\"0\" skipped=\"0\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"new violation of small (1 step); expected to hold\" type=\"new-violation\">") !=
        std::string::npos);
  // SARIF: the seed violation at the invariant's line, its 10 steps as a code flow through the spec's lines.
  int invariant_line = 0;
  {
    std::istringstream lib(slurp("spec/lib/ulp.qpspec"));
    std::string line;
    for (int n = 1; std::getline(lib, line); ++n) {
      if (line.rfind("invariant passive_send_after_peer_recv:", 0) == 0) invariant_line = n;
    }
  }
  REQUIRE(invariant_line > 0);
  bool found = false;
  for (const json& res : sarif["runs"][0]["results"]) {
    if (res["ruleId"] != "passive_send_after_peer_recv" ||
        res["properties"]["configuration"] != "transport=IB connect_rnr_retry=0") {
      continue;
    }
    found = true;
    CHECK(res["level"] == "note");  // expected
    CHECK(res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "spec/lib/ulp.qpspec");
    CHECK(res["locations"][0]["physicalLocation"]["region"]["startLine"] == invariant_line);
    const json& flow = res["codeFlows"][0]["threadFlows"][0]["locations"];
    REQUIRE(flow.size() == 10);
    CHECK(flow[0]["location"]["physicalLocation"]["region"]["startLine"] == 24);
    CHECK(flow[9]["location"]["message"]["text"] == "step 10: rnr_retry_exceeded(e=ACTIVE): fabric: RNR NAK (retries exhausted)");
  }
  CHECK(found);
  // A liveness property's lasso: the message says prefix and cycle, the code flow marks the cycle's steps.
  found = false;
  for (const json& res : sarif["runs"][0]["results"]) {
    if (res["ruleId"] != "sends_complete" || res["properties"]["configuration"] != "verbs_rnr_retry=7 repost=false") {
      continue;
    }
    found = true;
    CHECK(res["message"]["text"].get<std::string>().find("a lasso: a prefix of 18 steps, then a cycle of 1 step repeated forever") !=
          std::string::npos);
    CHECK(res["locations"][0]["physicalLocation"]["region"]["startLine"] == 52);
    const json& flow = res["codeFlows"][0]["threadFlows"][0]["locations"];
    REQUIRE(flow.size() == 19);
    CHECK(flow[17]["location"]["message"]["text"].get<std::string>().rfind("step 18: ", 0) == 0);
    CHECK(flow[18]["location"]["message"]["text"] == "step 19 (cycle): rnr_nak(e=PASSIVE): fabric: RNR NAK");
  }
  CHECK(found);
  json summary = json::parse(slurp(o.json));
  CHECK(summary["exit_code"] == 1);
}

std::string seed_trace() {
  fs::path trace = tmp_dir() / "seed.json";
  cli::VerifyOptions vo;
  vo.file = "spec/03_patch_passive_first_ib.qpspec";
  vo.trace_out = trace.string();
  std::ostringstream out, err;
  REQUIRE(cli::run_verify(vo, out, err) == 1);
  return trace.string();
}

TEST_CASE("show: the seed counterexample as SVG, HTML and Mermaid; lanes and arrows come from the trace") {
  std::string trace = seed_trace();
  fs::path dir = tmp_dir();
  cli::ShowOptions so;
  so.report = trace;
  so.svg = (dir / "seed.svg").string();
  so.html = (dir / "seed.html").string();
  so.mermaid = "-";
  std::ostringstream out, err;
  REQUIRE(cli::run_show(so, out, err) == 0);
  std::string mermaid = out.str();
  CHECK(mermaid.find("participant L0 as client\n  participant L1 as fabric\n  participant L2 as server") !=
        std::string::npos);
  CHECK(mermaid.find("L0->>L2: REQ") != std::string::npos);
  CHECK(mermaid.find("L2->>L0: REP") != std::string::npos);
  // The UNSOL Send is flushed when the RNR retries run out (the passive QP goes to ERR): never delivered.
  CHECK(mermaid.find("L2-xL0: IBV_WR_SEND, UNSOL (discarded)") != std::string::npos);  // wire_op and wire_msg: one arrow
  CHECK(mermaid.find("L2->>L0: UNSOL") == std::string::npos);
  CHECK(mermaid.find("Note over L2: 6. ibv_post_recv(PASSIVE, 2)") != std::string::npos);
  CHECK(mermaid.find("Note over L1: 10. fabric: RNR NAK (retries exhausted)") != std::string::npos);
  CHECK(mermaid.find("Note over L2: 10. WC IBV_WC_RNR_RETRY_EXC_ERR") != std::string::npos);
  CHECK(mermaid.find("Note over L0,L2: VIOLATED invariant no_send_to_empty_rq is false") != std::string::npos);
  std::string svg = slurp(so.svg);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find(">RNR NAK") == std::string::npos);  // the label is the rule's verbs label, untouched
  CHECK(svg.find("fabric: RNR NAK (retries exhausted)") != std::string::npos);
  CHECK(svg.find("\u2717 invariant no_send_to_empty_rq is false") != std::string::npos);
  CHECK(sh("xmllint --noout " + so.svg) == 0);  // well-formed XML
  // No arrow label covers a mark (ESTABLISHED and RTU sat on the RNR NAK box): label boxes are the translucent
  // rects, mark boxes the rects inside a <g>.
  struct Box {
    int x, y, w, h;
  };
  std::vector<Box> labels, marks;
  std::regex rect("(<g><title>[^<]*</title>)?<rect x=\"(-?\\d+)\" y=\"(-?\\d+)\" width=\"(\\d+)\" height=\"(\\d+)\"([^>]*)>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    Box b{std::stoi((*it)[2]), std::stoi((*it)[3]), std::stoi((*it)[4]), std::stoi((*it)[5])};
    if ((*it)[6].str().find("opacity=\"0.85\"") != std::string::npos) labels.push_back(b);
    else if ((*it)[1].matched) marks.push_back(b);
  }
  CHECK(labels.size() >= 3);
  CHECK(marks.size() >= 10);
  for (const Box& l : labels) {
    for (const Box& k : marks) {
      CHECK_MESSAGE(!(l.x < k.x + k.w && k.x < l.x + l.w && l.y < k.y + k.h && k.y < l.y + l.h),
                    "label at ", l.x, ",", l.y, " covers the mark at ", k.x, ",", k.y);
    }
  }
  std::string html = slurp(so.html);
  CHECK(html.find("<!DOCTYPE html>") == 0);
  CHECK(html.find("<svg") != std::string::npos);

  // iWARP: the TERMINATE.
  cli::VerifyOptions vo;
  vo.file = "spec/04_patch_passive_first_iwarp.qpspec";
  vo.trace_out = (dir / "iwarp.json").string();
  std::ostringstream o2, e2;
  REQUIRE(cli::run_verify(vo, o2, e2) == 1);
  so = {};
  so.report = vo.trace_out;
  so.mermaid = "-";
  std::ostringstream o3, e3;
  REQUIRE(cli::run_show(so, o3, e3) == 0);
  CHECK(o3.str().find("Note over L1: 12. fabric: TERMINATE") != std::string::npos);
  CHECK(o3.str().find("L1->>L0: ESTABLISHED") == std::string::npos);  // still queued at the end: in flight
  CHECK(o3.str().find("L1--)L0: ESTABLISHED (in flight)") != std::string::npos);

  // Bad input.
  std::ofstream(dir / "not_a_report.json") << "{\"schema\": \"other\"}";
  so = {};
  so.report = (dir / "not_a_report.json").string();
  std::ostringstream o4, e4;
  CHECK(cli::run_show(so, o4, e4) == 3);
  so.report = (dir / "missing.json").string();
  CHECK(cli::run_show(so, o4, e4) == 4);
}

TEST_CASE("show reads trace files as replay does: not a regular file is exit 4, a deep or cut document exit 3") {
  fs::path dir = tmp_dir();
  cli::ShowOptions so;
  so.mermaid = "-";
  auto run = [&](const std::string& report, std::string* err_text) {
    so.report = report;
    std::ostringstream out, err;
    int rc = cli::run_show(so, out, err);
    *err_text = err.str();
    return rc;
  };
  std::string e;
  fs::path fifo = dir / "report.fifo";
  fs::remove(fifo);
  REQUIRE(sh("mkfifo " + fifo.string()) == 0);
  CHECK(run(fifo.string(), &e) == 4);  // blocked forever before the fix
  CHECK(e.find("(missing, unreadable or not a regular file)") != std::string::npos);
  CHECK(run(dir.string(), &e) == 4);   // exit 3 "not a qpcheck report" before the fix
  std::ofstream(dir / "deep.json") << "{\"schema\":" << std::string(100000, '[') << std::string(100000, ']') << "}";
  CHECK(run((dir / "deep.json").string(), &e) == 3);  // a stack overflow in the error message before the fix
  CHECK(e.find("nest deeper than 32 levels") != std::string::npos);
  nlohmann::json doc = nlohmann::json::parse(slurp(seed_trace()));
  doc["steps"].erase(doc["steps"].size() - 1);
  doc["steps"].erase(doc["steps"].size() - 1);
  std::ofstream(dir / "cut.json") << doc.dump();
  CHECK(run((dir / "cut.json").string(), &e) == 3);  // drawn as a counterexample before the fix
  CHECK(e.find("(a truncated trace?)") != std::string::npos);
}

TEST_CASE("the seed's SVG renders in headless Chromium: the screenshot is not one uniform colour") {
  const char* browser = nullptr;
  for (const char* b : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (fs::exists(b)) browser = b;
  }
  if (browser == nullptr) {
    MESSAGE("SKIPPED: chromium is not installed (tools/install-deps.sh installs it; CI runs this check)");
    return;
  }
  std::string trace = seed_trace();
  fs::path dir = tmp_dir();
  cli::ShowOptions so;
  so.report = trace;
  so.svg = (dir / "chart.svg").string();
  std::ostringstream out, err;
  REQUIRE(cli::run_show(so, out, err) == 0);
  fs::path shot = dir / "chart.png", blank = dir / "blank.png";
  std::ofstream(dir / "blank.svg") << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"100\">"
                                      "<rect width=\"200\" height=\"100\" fill=\"#ffffff\"/></svg>";
  auto screenshot = [&](const fs::path& svg, const fs::path& png) {
    fs::path profile = dir / ("profile-" + png.stem().string());
    fs::remove_all(profile);
    std::string cmd = fmt::format(
        "HOME={} timeout 120 {} --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
        "--disable-background-networking --disable-component-update --disable-sync --user-data-dir={} "
        "--window-size=800,700 --screenshot={} file://{} >{}/chromium.log 2>&1",
        dir.string(), browser, profile.string(), png.string(), fs::absolute(svg).string(), dir.string());
    return sh(cmd);
  };
  REQUIRE(screenshot(so.svg, shot) == 0);
  REQUIRE(screenshot(dir / "blank.svg", blank) == 0);
  auto colours = [&](const fs::path& png) {
    fs::path count = dir / "colours.txt";
    REQUIRE(sh("/usr/bin/python3 tests/png_colours.py " + png.string() + " > " + count.string()) == 0);
    return std::stoi(slurp(count));
  };
  CHECK(colours(blank) == 1);     // the check does see a uniform picture as one colour
  CHECK(colours(shot) > 20);      // text, lanes, arrows and coloured marks
}

TEST_CASE("diff: today vs the 2021 patch (passive-first) reports exactly the verdict changes") {
  cli::DiffOptions o;
  o.old_spec = "spec/01_linux_today.qpspec";
  o.new_spec = "spec/03_patch_passive_first_ib.qpspec";
  o.format = cli::Format::kJson;
  std::ostringstream out, err;
  CHECK(cli::run_diff(o, out, err) == 1);
  json d = json::parse(out.str());
  CHECK(d["schema"] == "qpcheck.diff");
  CHECK(d["version"] == 2);
  // "params" is an object of every parameter, as in the gate's JSON summary (version 1 wrote a string).
  CHECK(d["changes"][0]["params"]["transport"] == "IB");
  CHECK(d["changes"][0]["params"]["connect_rnr_retry"] == "7");
  CHECK(d["changes"][0]["params"].size() == 55);  // every parameter of library v3.6
  // Shared configurations (every parameter equal): IB and iWARP with LEGACY creation and connect_rnr_retry 7.
  std::vector<std::string> changes;
  for (const json& c : d["changes"]) {
    changes.push_back(c["configuration"].get<std::string>() + " " + c["property"].get<std::string>() + " " +
                      c["old"]["verdict"].get<std::string>() + "->" + c["new"]["verdict"].get<std::string>());
  }
  CHECK(changes == std::vector<std::string>{
                       "transport=IB connect_rnr_retry=7 no_send_to_empty_rq holds->violated",
                       "transport=IB connect_rnr_retry=7 passive_send_after_peer_recv holds->violated",
                       "transport=IWARP connect_rnr_retry=7 no_send_to_empty_rq holds->violated",
                       "transport=IWARP connect_rnr_retry=7 no_fatal_qp_error holds->violated",
                       "transport=IWARP connect_rnr_retry=7 passive_send_after_peer_recv holds->violated",
                       "transport=IWARP connect_rnr_retry=7 deadlock holds->violated",
                   });
  CHECK(d["unchanged"] == 32);
  CHECK(d["only_in_old"].size() == 2);
  CHECK(d["only_in_new"].size() == 2);

  // Same spec: no change, exit 0; Markdown for a PR comment.
  o.new_spec = o.old_spec;
  o.format = cli::Format::kText;
  std::ostringstream o2, e2;
  CHECK(cli::run_diff(o, o2, e2) == 0);
  CHECK(o2.str().find("No verdict changes (76 property verdicts compared).") != std::string::npos);
}

}  // namespace
}  // namespace qpcheck
