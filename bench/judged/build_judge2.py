"""Build 5 DuckDB warehouses for judging assay. Seeded, deterministic."""
import os, sys, datetime as dt
import numpy as np, pandas as pd, duckdb

OUT = sys.argv[1]
rng = np.random.default_rng(20261130)
D0 = pd.Timestamp("2025-07-01")


def write(path, tables):
    if os.path.exists(path):
        os.remove(path)
    con = duckdb.connect(path)
    for name, df in tables.items():
        con.register("tmp_df", df)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM tmp_df")
        con.unregister("tmp_df")
    con.close()


def days(n, span=365):
    return D0 + pd.to_timedelta(rng.integers(0, span, n), unit="D")


# ---------------------------------------------------------------- 1 insurance
def insurance():
    n_adj = 60
    adjusters = pd.DataFrame({
        "adjuster_id": np.arange(1, n_adj + 1),
        "adjuster_name": [f"Adjuster {i:03d}" for i in range(1, n_adj + 1)],
        "team": rng.choice(["North Hub", "South Hub", "Central", "Remote Ops"], n_adj),
        "years_experience": rng.integers(1, 25, n_adj),
    })
    n_pol = 12000
    policies = pd.DataFrame({
        "policy_id": np.arange(100000, 100000 + n_pol),
        "product_line": rng.choice(["auto", "home", "renters", "motorcycle"], n_pol, p=[.5, .3, .15, .05]),
        "state": rng.choice(["CA", "TX", "FL", "NY", "OH", "WA", "GA"], n_pol),
        "annual_premium": np.round(rng.gamma(4, 300, n_pol), 2),
        "start_date": (D0 - pd.to_timedelta(rng.integers(0, 900, n_pol), unit="D")).date,
        "holder_age": rng.integers(18, 85, n_pol),
    })
    n = 30000
    pol = rng.choice(policies.policy_id.values, n)
    pl = policies.set_index("policy_id").loc[pol]
    adj = rng.integers(1, n_adj + 1, n)
    team = adjusters.set_index("adjuster_id").loc[adj, "team"].values
    incident = days(n)
    ctype = np.where(pl.product_line.values == "auto",
                     rng.choice(["collision", "theft", "glass", "liability"], n),
                     rng.choice(["water_damage", "fire", "theft", "storm", "liability"], n))
    # PLANT 1: adjusters in team 'Remote Ops' deny 34% vs ~11% (only visible via join to adjusters)
    p_deny = np.where(team == "Remote Ops", 0.34, 0.11)
    denied = rng.random(n) < p_deny
    status = np.where(denied, "denied", rng.choice(["paid", "paid", "paid", "open", "withdrawn"], n))
    claimed = np.round(rng.lognormal(8, 0.9, n), 2)
    # PLANT 2: water_damage claims in FL claim ~2.5x more
    claimed = np.where((ctype == "water_damage") & (pl.state.values == "FL"), np.round(claimed * 2.5, 2), claimed)
    paid = np.where(status == "paid", np.round(claimed * rng.uniform(0.4, 1.0, n), 2), np.nan)
    reported = incident + pd.to_timedelta(rng.integers(0, 30, n), unit="D")
    settle_days = rng.gamma(3, 12, n).astype(int) + 1
    settled = reported + pd.to_timedelta(settle_days, unit="D")
    settled = pd.Series(settled).where(status != "open", pd.NaT)
    # PLANT 3: data-quality: ~2.5% of closed claims have settled_date BEFORE incident_date
    bad = (rng.random(n) < 0.025) & (status != "open")
    settled = settled.where(~bad, pd.Series(incident) - pd.to_timedelta(rng.integers(5, 200, n), unit="D"))
    claims = pd.DataFrame({
        "claim_id": np.arange(1, n + 1),
        "policy_id": pol,
        "adjuster_id": adj,
        "claim_type": ctype,
        "incident_date": pd.Series(incident).dt.date,
        "reported_date": pd.Series(reported).dt.date,
        "settled_date": settled.dt.date,
        "status": status,
        "claimed_amount": claimed,
        "paid_amount": paid,
        "police_report_filed": rng.random(n) < 0.4,
        "description": rng.choice(["rear-ended at light", "pipe burst in kitchen", "window broken",
                                   "hail on roof", "stolen from driveway", "kitchen fire", None], n),
    })
    write(f"{OUT}/insurance.duckdb", {"claims": claims, "policies": policies, "adjusters": adjusters})


# ---------------------------------------------------------------- 2 e-learning
def elearning():
    n_c = 180
    instructors = pd.DataFrame({
        "instructor_id": np.arange(1, 41),
        "instructor_name": [f"Instructor {i}" for i in range(1, 41)],
        "is_verified": rng.random(40) < 0.7,
    })
    courses = pd.DataFrame({
        "course_id": np.arange(1, n_c + 1),
        "title": [f"Course {i}" for i in range(1, n_c + 1)],
        "category": rng.choice(["Programming", "Design", "Business", "Data Science", "Languages"], n_c),
        "level": rng.choice(["beginner", "intermediate", "advanced"], n_c),
        "instructor_id": rng.integers(1, 41, n_c),
        "list_price": rng.choice([0, 19.99, 49.99, 99.0, 149.0], n_c),
        "total_hours": np.round(rng.uniform(2, 40, n_c), 1),
    })
    n_s = 15000
    students = pd.DataFrame({
        "student_id": np.arange(1, n_s + 1),
        "country": rng.choice(["US", "IN", "BR", "DE", "GB", "NG", "MX"], n_s),
        "signup_date": (D0 - pd.to_timedelta(rng.integers(0, 400, n_s), unit="D")).date,
        "age_band": rng.choice(["18-24", "25-34", "35-44", "45+"], n_s),
    })
    n = 40000
    en_date = days(n)
    platform = rng.choice(["web", "ios", "android"], n, p=[.5, .25, .25])
    cid = rng.integers(1, n_c + 1, n)
    hours = np.round(rng.gamma(2, 4, n), 1)
    # PLANT 1: android completion rate drops from 2026-03-01 (45% -> 20%); others ~45%
    p_comp = np.where((platform == "android") & (en_date >= pd.Timestamp("2026-03-01")), 0.20, 0.45)
    completed = rng.random(n) < p_comp
    # PLANT 2: final_quiz_score correlates with hours_watched (r ~ 0.6)
    score = np.clip(50 + 2.2 * hours + rng.normal(0, 10, n), 0, 100).round(0)
    score = np.where(rng.random(n) < 0.3, np.nan, score)
    enrol = pd.DataFrame({
        "enrollment_id": np.arange(1, n + 1),
        "student_id": rng.integers(1, n_s + 1, n),
        "course_id": cid,
        "enrolled_at": en_date,
        "platform": platform,
        "price_paid": courses.set_index("course_id").loc[cid, "list_price"].values * rng.choice([1, 1, 1, .5], n),
        "hours_watched": hours,
        "completed": completed,
        "final_quiz_score": score,
        "refund_requested": rng.random(n) < 0.05,
        "coupon_code": rng.choice([None, None, None, "SPRING10", "WELCOME"], n),
    })
    # PLANT 3: duplicates: 1,200 enrollment rows re-inserted with new ids (same student, course, timestamp)
    dup = enrol.sample(1200, random_state=7).copy()
    dup["enrollment_id"] = np.arange(n + 1, n + 1 + len(dup))
    enrol = pd.concat([enrol, dup]).sort_values("enrolled_at").reset_index(drop=True)
    write(f"{OUT}/elearning.duckdb", {"enrollments": enrol, "courses": courses,
                                     "students": students, "instructors": instructors})


# ---------------------------------------------------------------- 3 food delivery
def delivery():
    n_r = 400
    restaurants = pd.DataFrame({
        "restaurant_id": np.arange(1, n_r + 1),
        "restaurant_name": [f"Restaurant {i}" for i in range(1, n_r + 1)],
        "cuisine": rng.choice(["pizza", "burger", "sushi", "indian", "mexican", "salad", "thai"], n_r),
        "city": rng.choice(["Lisbon", "Porto", "Braga", "Coimbra"], n_r, p=[.45, .3, .15, .1]),
        "rating": np.round(rng.uniform(3.2, 4.9, n_r), 1),
    })
    n_k = 300
    couriers = pd.DataFrame({
        "courier_id": np.arange(1, n_k + 1),
        "vehicle_type": rng.choice(["scooter", "bicycle", "car"], n_k, p=[.5, .3, .2]),
        "joined_date": (D0 - pd.to_timedelta(rng.integers(0, 700, n_k), unit="D")).date,
        "is_fulltime": rng.random(n_k) < 0.4,
    })
    n = 50000
    # PLANT 2: steady growth: order volume rises ~5%/month over the 12 months
    w = np.exp(0.05 * np.arange(365) / 30.4)
    dday = rng.choice(365, n, p=w / w.sum())
    placed = D0 + pd.to_timedelta(dday, unit="D") + pd.to_timedelta(rng.integers(10 * 60, 23 * 60, n), unit="m")
    rid = rng.integers(1, n_r + 1, n)
    kid = rng.integers(1, n_k + 1, n)
    rr = restaurants.set_index("restaurant_id").loc[rid]
    veh = couriers.set_index("courier_id").loc[kid, "vehicle_type"].values
    dist = np.round(rng.gamma(2.5, 1.3, n), 2)
    # PLANT 1: in Porto, bicycle couriers are late much more often (38% vs ~12%) - two joins
    p_late = np.where((veh == "bicycle") & (rr.city.values == "Porto"), 0.38, 0.12)
    late = rng.random(n) < p_late
    promised = rng.choice([30, 35, 40, 45], n)
    actual = np.where(late, promised + rng.integers(5, 40, n), promised - rng.integers(0, 15, n))
    subtotal = np.round(rng.gamma(3, 8, n), 2)
    # PLANT 3: sushi orders have much higher refund rate (15% vs 4%)
    p_ref = np.where(rr.cuisine.values == "sushi", 0.15, 0.04)
    status = np.where(rng.random(n) < 0.03, "cancelled", "delivered")
    refunded = (rng.random(n) < p_ref) & (status == "delivered")
    orders = pd.DataFrame({
        "order_id": np.arange(1, n + 1),
        "restaurant_id": rid,
        "courier_id": kid,
        "customer_id": rng.integers(1, 20001, n),
        "placed_at": placed,
        "status": status,
        "subtotal_eur": subtotal,
        "delivery_fee_eur": np.round(1.5 + 0.4 * dist, 2),
        "tip_eur": np.round(np.where(rng.random(n) < .4, rng.gamma(1.5, 1.2, n), 0), 2),
        "distance_km": dist,
        "promised_minutes": promised,
        "actual_minutes": np.where(status == "cancelled", None, actual),
        "refunded": refunded,
        "payment_method": rng.choice(["card", "mbway", "cash", "paypal"], n, p=[.5, .25, .1, .15]),
        "customer_note": rng.choice([None, None, None, "no onions", "ring the bell", "leave at door"], n),
    })
    write(f"{OUT}/delivery.duckdb", {"orders": orders, "restaurants": restaurants, "couriers": couriers})


# ---------------------------------------------------------------- 4 energy meters
def energy():
    n_m = 500
    meters = pd.DataFrame({
        "meter_id": np.arange(1, n_m + 1),
        "region": rng.choice(["North", "South", "East", "West"], n_m),
        "tariff": rng.choice(["standard", "economy7", "ev_night", "green"], n_m, p=[.5, .2, .15, .15]),
        "firmware_version": rng.choice(["v1.8", "v2.0", "v2.1"], n_m, p=[.3, .5, .2]),
        "install_date": (D0 - pd.to_timedelta(rng.integers(30, 2000, n_m), unit="D")).date,
        "property_type": rng.choice(["flat", "terraced", "semi", "detached"], n_m),
    })
    n = 60000
    mid = rng.integers(1, n_m + 1, n)
    m = meters.set_index("meter_id").loc[mid]
    rd = days(n)
    month = pd.Series(rd).dt.month.values
    seasonal = 1 + 0.35 * np.cos((month - 1) / 12 * 2 * np.pi)
    base = rng.gamma(6, 1.6, n) * seasonal
    # PLANT 1: ev_night tariff uses ~1.8x kWh per day
    kwh = np.where(m.tariff.values == "ev_night", base * 1.8, base)
    # PLANT 2: East region consumption +40% from 2026-01-15 (new estate / heat pumps)
    kwh = np.where((m.region.values == "East") & (rd >= pd.Timestamp("2026-01-15")), kwh * 1.4, kwh)
    kwh = np.round(kwh, 3)
    # PLANT 3: firmware v2.1 emits impossible negative readings ~8% of the time
    neg = (m.firmware_version.values == "v2.1") & (rng.random(n) < 0.08)
    kwh = np.where(neg, -np.round(rng.uniform(1, 30, n), 3), kwh)
    readings = pd.DataFrame({
        "reading_id": np.arange(1, n + 1),
        "meter_id": mid,
        "reading_date": pd.Series(rd).dt.date,
        "kwh_consumed": kwh,
        "peak_kw": np.round(np.abs(kwh) / 24 * rng.uniform(2, 5, n), 3),
        "is_estimated": rng.random(n) < 0.07,
        "read_method": rng.choice(["smart", "manual", "customer_submitted"], n, p=[.8, .12, .08]),
        "quality_flag": rng.choice(["ok", "ok", "ok", "ok", "ok", "ok", "gap_filled", None], n),
    })
    bills = readings.assign(month=pd.Series(rd).dt.to_period("M").astype(str)).groupby(["meter_id", "month"]).agg(
        kwh=("kwh_consumed", "sum")).reset_index()
    bills["bill_id"] = np.arange(1, len(bills) + 1)
    bills["amount_gbp"] = np.round(bills.kwh.clip(lower=0) * 0.27 + 12, 2)
    bills["paid_on_time"] = rng.random(len(bills)) < 0.88
    write(f"{OUT}/energy.duckdb", {"meter_readings": readings, "meters": meters,
                                  "monthly_bills": bills[["bill_id", "meter_id", "month", "amount_gbp", "paid_on_time"]]})


# ---------------------------------------------------------------- 5 control: B2B pipeline, pure noise
def pipeline_control():
    reps = pd.DataFrame({
        "rep_id": np.arange(1, 51),
        "rep_name": [f"Rep {i}" for i in range(1, 51)],
        "region": rng.choice(["AMER", "EMEA", "APAC"], 50),
        "seniority": rng.choice(["junior", "mid", "senior"], 50),
    })
    n_a = 3000
    accounts = pd.DataFrame({
        "account_id": np.arange(1, n_a + 1),
        "industry": rng.choice(["software", "retail", "healthcare", "manufacturing", "finance"], n_a),
        "employee_band": rng.choice(["1-50", "51-200", "201-1000", "1000+"], n_a),
        "country": rng.choice(["US", "DE", "UK", "FR", "JP", "AU"], n_a),
    })
    n = 20000
    created = days(n)
    stage = rng.choice(["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"],
                       n, p=[.15, .15, .15, .1, .18, .27])
    close_due = created + pd.to_timedelta(rng.integers(20, 120, n), unit="D")
    closed = np.isin(stage, ["closed_won", "closed_lost"])
    actual_close = pd.Series(close_due + pd.to_timedelta(rng.integers(-20, 30, n), unit="D")).where(closed, pd.NaT)
    opps = pd.DataFrame({
        "opportunity_id": np.arange(1, n + 1),
        "account_id": rng.integers(1, n_a + 1, n),
        "rep_id": rng.integers(1, 51, n),
        "created_date": pd.Series(created).dt.date,
        "expected_close_date": pd.Series(close_due).dt.date,
        "actual_close_date": actual_close.dt.date,
        "stage": stage,
        "amount_usd": np.round(rng.lognormal(10, 0.8, n), 0),
        "lead_source": rng.choice(["inbound", "outbound", "partner", "event"], n),
        "product": rng.choice(["Core", "Analytics add-on", "Enterprise suite"], n),
        "discount_pct": np.round(rng.uniform(0, 25, n), 1),
        "next_step": rng.choice([None, "send proposal", "demo scheduled", "legal review"], n),
    })
    write(f"{OUT}/pipeline.duckdb", {"opportunities": opps, "accounts": accounts, "sales_reps": reps})


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    insurance(); elearning(); delivery(); energy(); pipeline_control()
    print("ok")
