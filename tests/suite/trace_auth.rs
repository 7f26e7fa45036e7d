//! Who `trace` asks the auth policy about, on the committed example (`auth.kong` is
//! `vpc-0a1b2c3d4e5f67890`; `payments` declares `role/checkout` from
//! `vpc-0f1e2d3c4b5a69788`, `audit-log` its organization with POST): Kong for a request
//! through Kong, the caller the options give for a call straight to a service's domain,
//! never a VPC nobody gave; and `trace --callers`, who may call an app.

use super::common;
use super::ecosystem::trace_json;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use common::latgen;

const KONG_VPC: &str = "vpc-0a1b2c3d4e5f67890";
const CHECKOUT: &str = "arn:aws:iam::111122223333:role/checkout";
const CHECKOUT_VPC: &str = "vpc-0f1e2d3c4b5a69788";
/// A role that only `orders` declares: not a caller of `payments`.
const ORDER_REPORTS: &str = "arn:aws:iam::111122223333:role/order-reports";
/// The VPC id the auth model uses for a caller nobody declared; never shown as anyone's.
const MADE_UP_VPC: &str = "vpc-00000000000000000";

fn trace_human(args: &[&str]) -> common::Run {
    let mut all = vec!["trace"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "generated"]);
    latgen(&common::root(), &all)
}

#[test]
fn through_kong_the_policy_is_asked_about_kong_not_the_role_as_names() {
    let (code, v) = trace_json(&["/payments", "--as", ORDER_REPORTS]);
    assert_eq!(code, Some(0), "{v:#}");
    let auth = &v["auth"];
    assert_eq!(auth["checkedAs"], "kong", "{auth:#}");
    assert_eq!(auth["allowed"], true, "{auth:#}");
    assert_eq!(auth["caller"]["principal"], Value::Null);
    assert_eq!(auth["caller"]["vpc"], KONG_VPC);
    assert_eq!(auth["notChecked"]["principal"], ORDER_REPORTS);
    let run = trace_human(&["/payments", "--as", ORDER_REPORTS]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let auth: Vec<&str> = (run.stdout.lines())
        .skip_while(|l| !l.starts_with("auth "))
        .take(3)
        .collect();
    assert_eq!(
        auth,
        [
            format!(
                "auth      as Kong, an unsigned caller from {KONG_VPC} (GET): allowed by statement 11 (generated/lattice/iamauthpolicy-group-01.yaml)"
            ),
            "          a request through Kong reaches Lattice as Kong (auth.kong in latgen.yaml), not as the client behind it".to_string(),
            format!(
                "          not checked: --as {ORDER_REPORTS}, the client behind Kong, which Lattice does not see; to check it as a direct caller, trace http://group-01.lattice.internal/payments with it"
            ),
        ]
    );
}

#[test]
fn through_kong_without_a_caller_the_check_is_made_as_kong() {
    let (code, v) = trace_json(&["/shop/cart/x"]);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["auth"]["checkedAs"], "kong");
    assert_eq!(v["auth"]["allowed"], true);
    assert_eq!(v["auth"]["notChecked"], Value::Null);
}

#[test]
fn through_kong_the_check_is_made_with_the_requests_method() {
    // Kong forwards the client's method; its statements name none, so POST is let in.
    let (code, v) = trace_json(&["/payments", "--method", "POST"]);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["auth"]["caller"]["method"], "POST");
    assert_eq!(v["auth"]["allowed"], true);
}

#[test]
fn a_direct_call_is_checked_as_the_caller_given() {
    let (code, v) = trace_json(&[
        "http://group-01.lattice.internal/payments",
        "--as",
        CHECKOUT,
        "--from-vpc",
        CHECKOUT_VPC,
    ]);
    assert_eq!(code, Some(0), "{v:#}");
    let auth = &v["auth"];
    assert_eq!(auth["checkedAs"], "caller");
    assert_eq!(auth["caller"]["principal"], CHECKOUT);
    assert_eq!(auth["caller"]["vpc"], CHECKOUT_VPC);
    assert_eq!(auth["message"], "allowed by statement 12");
    assert_eq!(auth["notChecked"], Value::Null);
}

#[test]
fn a_direct_call_without_from_vpc_names_no_made_up_vpc_and_says_what_each_vpc_gets() {
    let url = "http://group-01.lattice.internal/payments";
    let run = trace_human(&[url, "--as", CHECKOUT]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(!run.stdout.contains(MADE_UP_VPC), "{}", run.stdout);
    let auth: Vec<&str> = (run.stdout.lines())
        .skip_while(|l| !l.starts_with("auth "))
        .take_while(|l| !l.starts_with("backend "))
        .collect();
    assert_eq!(
        auth,
        [
            format!(
                "auth      as {CHECKOUT} from a VPC not given (GET): it depends on the VPC it sends from, which --from-vpc gives (generated/lattice/iamauthpolicy-group-01.yaml)"
            ),
            "          a request straight to a service's domain reaches Lattice as its sender, the caller the options give".to_string(),
            // Kong's statement lets in any caller from Kong's VPC, signed or not.
            format!("          from {KONG_VPC}: allowed by statement 11"),
            format!("          from {CHECKOUT_VPC}: allowed by statement 12"),
            "          from a VPC the policy does not name: denied (no statement allows it)"
                .to_string(),
        ]
    );
    let (code, v) = trace_json(&[url, "--as", CHECKOUT]);
    assert_eq!(code, Some(1));
    assert!(!v.to_string().contains(MADE_UP_VPC), "{v:#}");
    assert_eq!(v["auth"]["caller"]["vpc"], Value::Null);
    assert_eq!(v["auth"]["decided"], false);
    assert_eq!(
        v["auth"]["byVpc"],
        json!([
            { "vpc": KONG_VPC, "allowed": true, "message": "allowed by statement 11" },
            { "vpc": CHECKOUT_VPC, "allowed": true, "message": "allowed by statement 12" },
            { "vpc": null, "allowed": false, "message": "denied (no statement allows it)" },
        ])
    );
}

#[test]
fn a_direct_caller_let_in_from_any_vpc_needs_no_from_vpc() {
    let url = "http://group-01.lattice.internal/audit";
    let args = [url, "--org", "o-a1b2c3d4e5", "--method", "POST"];
    let (code, v) = trace_json(&args);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["auth"]["decided"], true);
    assert_eq!(v["auth"]["caller"]["vpc"], Value::Null);
    let run = trace_human(&args);
    assert!(!run.stdout.contains(MADE_UP_VPC), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "\nauth      as a signed caller of o-a1b2c3d4e5 from a VPC not given (POST): allowed by statement 6 (generated/lattice/iamauthpolicy-group-01.yaml)\n"
        ),
        "{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------
// trace --callers
// ---------------------------------------------------------------------------------------

#[test]
fn callers_of_an_app_with_declared_callers() {
    let run = trace_human(&["--callers", "payments"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        format!(
            "\
app       payments (apps/commerce/payments.yaml)
lattice   service group-01-lattice-groups (route lattice-groups/group-01), custom domain group-01.lattice.internal: PathPrefix /payments (generated/lattice/httproute-group-01.yaml)
auth      policy generated/lattice/iamauthpolicy-group-01.yaml
caller    Kong (auth.kong): any caller, signed or not, from {KONG_VPC}, any method: allowed by statement 11
caller    the app's (callers[0]): {CHECKOUT}, from {CHECKOUT_VPC}, any method: allowed by statement 12
"
        )
    );
}

#[test]
fn callers_as_json_list_each_app_in_name_order() {
    let run = latgen(
        &common::root(),
        &[
            "trace",
            "--callers",
            "payments",
            "--callers",
            "audit-log",
            "-o",
            "generated",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let apps = v["apps"].as_array().unwrap();
    let names: Vec<&Value> = apps.iter().map(|a| &a["app"]).collect();
    assert_eq!(names, [&json!("audit-log"), &json!("payments")]);
    let payments = &apps[1];
    assert_eq!(
        payments["callers"],
        json!([
            { "declaredIn": "auth.kong", "principals": [], "orgs": [], "vpcs": [KONG_VPC], "methods": [] },
            { "declaredIn": "callers[0]", "principals": [CHECKOUT], "orgs": [], "vpcs": [CHECKOUT_VPC], "methods": [] },
        ])
    );
    let service = &payments["services"][0];
    assert_eq!(service["customDomain"], "group-01.lattice.internal");
    assert_eq!(
        service["callers"],
        json!([
            { "declaredIn": "auth.kong", "allowed": true, "message": "allowed by statement 11" },
            { "declaredIn": "callers[0]", "allowed": true, "message": "allowed by statement 12" },
        ])
    );
    assert_eq!(payments["allowed"], true);
    assert_eq!(apps[0]["callers"][1]["orgs"], json!(["o-a1b2c3d4e5"]));
    assert_eq!(apps[0]["callers"][1]["methods"], json!(["POST"]));
}

#[test]
fn callers_of_an_unknown_app_is_a_usage_error() {
    let run = trace_human(&["--callers", "payment"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: --callers: there is no app `payment` in apps; did you mean `payments`?\n"
    );
}

#[test]
fn through_kong_without_auth_kong_in_the_settings_the_answer_is_not_known() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let settings = "auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  serviceNetworkPolicy: true\n";
    let kong = format!("  kong: {{ vpcs: [{KONG_VPC}] }}\n");
    std::fs::write(dir.join("latgen.yaml"), format!("{settings}{kong}")).unwrap();
    common::path_app(dir, "shop", &["/shop"]);
    let render = latgen(dir, &["render"]);
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    // The committed policies stay; the settings no longer say how Kong calls Lattice.
    std::fs::write(dir.join("latgen.yaml"), settings).unwrap();
    let run = latgen(dir, &["trace", "/shop/x"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "\nauth      as Kong: not known: latgen.yaml does not say how Kong calls Lattice (auth.kong) (generated/lattice/iamauthpolicy-group-01.yaml)\n"
        ),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(MADE_UP_VPC), "{}", run.stdout);
}
