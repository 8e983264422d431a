import duckdb, numpy as np, pandas as pd, os, sys
rng = np.random.default_rng(11)
out = os.path.join(sys.argv[1], "saas.duckdb")
if os.path.exists(out): os.remove(out)
plans = pd.DataFrame({"plan_id":[1,2,3,4,5,6],
  "plan_name":["Starter","Starter Annual","Growth","Growth Annual","Business","Enterprise"],
  "tier":["starter","starter","growth","growth","business","enterprise"],
  "list_price_usd":[29.0,290.0,99.0,990.0,299.0,1500.0]})
N=6000
countries=np.array(["US","GB","DE","FR","BR","IN","CA","AU","NL","ES"]); cp=np.array([.32,.1,.1,.07,.09,.08,.07,.06,.05,.06])
industries=np.array(["software","retail","healthcare","finance","education","manufacturing","media","nonprofit"])
start=pd.Timestamp("2025-01-01")
signup=start+pd.to_timedelta(rng.integers(0,540,N),unit="D")
acc=pd.DataFrame({"account_id":np.arange(1001,1001+N),
  "company_name":[f"Company {i:05d} {s}" for i,s in zip(range(N),rng.choice(["Ltd","GmbH","Inc","LLC","SA","BV"],N))],
  "industry":rng.choice(industries,N),
  "country":rng.choice(countries,N,p=cp),
  "employee_band":rng.choice(["1-10","11-50","51-200","201-1000","1000+"],N,p=[.35,.3,.2,.1,.05]),
  "signup_date":signup.date,
  "acquisition_source":rng.choice(["organic","paid_search","partner","outbound","referral",None],N,p=[.3,.25,.12,.13,.15,.05])})
plan_id=rng.choice(plans.plan_id,N,p=[.3,.1,.25,.1,.17,.08])
cycle=np.where(np.isin(plan_id,[2,4]),"annual","monthly")
substatus=rng.choice(["active","cancelled","past_due","trialing"],N,p=[.7,.2,.05,.05])
canc=[ (pd.Timestamp(s)+pd.Timedelta(days=int(rng.integers(30,300)))).date() if st=="cancelled" else None for s,st in zip(acc.signup_date,substatus)]
subs=pd.DataFrame({"subscription_id":np.arange(50001,50001+N),"account_id":acc.account_id,"plan_id":plan_id,
  "billing_cycle":cycle,"status":substatus,"started_at":acc.signup_date,"cancelled_at":canc})
# invoices: monthly per account from signup until 2026-11-30 or cancel; subsample to ~40k
rows=[]
price=dict(zip(plans.plan_id,plans.list_price_usd))
end=pd.Timestamp("2026-11-30")
for a,s,p,c,cn in zip(acc.account_id,acc.signup_date,plan_id,cycle,canc):
    d=pd.Timestamp(s); stop=pd.Timestamp(cn) if cn else end
    step=12 if c=="annual" else 1
    while d<=stop:
        rows.append((a,d,price[p]))
        d=d+pd.DateOffset(months=step)
inv=pd.DataFrame(rows,columns=["account_id","invoice_date","amount_usd"])
inv=inv.sample(n=min(40000,len(inv)),random_state=3).sort_values("invoice_date").reset_index(drop=True)
M=len(inv)
inv["invoice_id"]=[f"INV-{i:07d}" for i in range(1,M+1)]
inv["amount_usd"]=(inv.amount_usd*rng.choice([1.0,1.0,1.0,0.9,0.8],M)).round(2)  # discounts
inv["currency"]=rng.choice(["USD","EUR","GBP"],M,p=[.6,.3,.1])
inv["payment_method"]=rng.choice(["card","paypal","sepa_debit","wire","ach"],M,p=[.55,.15,.12,.08,.10])
country=inv.account_id.map(dict(zip(acc.account_id,acc.country)))
p=np.full(M,0.04)
p[country.values=="BR"]=0.18                                         # P1
late=(inv.payment_method.values=="paypal")&(inv.invoice_date.values>=np.datetime64("2026-06-01"))
p[late]=np.maximum(p[late],0.16)                                      # P2
failed=rng.random(M)<p
other=rng.choice(["paid","paid","paid","paid","paid","paid","paid","paid","paid","refunded","pending"],M)
inv["status"]=np.where(failed,"failed",other)
inv["paid_at"]=[ (d+pd.Timedelta(days=int(rng.integers(0,10)))) if s in("paid","refunded") else pd.NaT for d,s in zip(inv.invoice_date,inv.status)]
inv["invoice_date"]=inv.invoice_date.dt.date
inv=inv[["invoice_id","account_id","invoice_date","amount_usd","currency","payment_method","status","paid_at"]]
dup=inv.sample(n=400,random_state=9)                                   # P3
inv=pd.concat([inv,dup]).sort_values("invoice_date").reset_index(drop=True)
con=duckdb.connect(out)
for n,df in [("plans",plans),("accounts",acc),("subscriptions",subs),("invoices",inv)]:
    con.register("df",df); con.execute(f"create table {n} as select * from df"); con.unregister("df")
print(con.execute("select count(*), count(distinct invoice_id) from invoices").fetchall())
print(con.execute("select a.country='BR', avg((status='failed')::int), count(*) from invoices i join accounts a using(account_id) group by 1").fetchall())
print(con.execute("select invoice_date>='2026-06-01', avg((status='failed')::int),count(*) from invoices where payment_method='paypal' group by 1").fetchall())
print(con.execute("describe invoices").fetchall())
