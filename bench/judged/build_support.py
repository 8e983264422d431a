import duckdb, numpy as np, pandas as pd, os, sys
rng = np.random.default_rng(44)
out = os.path.join(sys.argv[1], "support.duckdb")
if os.path.exists(out): os.remove(out)
teams=pd.DataFrame({"team_id":[1,2,3,4,5,6],"team_name":["Tier1 EMEA","Tier1 Americas","Tier1 APAC","Tier2 Billing","Tier2 Technical","Enterprise Desk"],
  "site":["Dublin","Austin","Manila","Dublin","Austin","Manila"]})
NA=120
agents=pd.DataFrame({"agent_id":np.arange(1,NA+1),"agent_name":[f"agent_{i:03d}" for i in range(1,NA+1)],
  "team_id":rng.integers(1,7,NA),"hired_on":(pd.Timestamp("2019-01-01")+pd.to_timedelta(rng.integers(0,2500,NA),unit="D")).date,
  "seniority":rng.choice(["junior","mid","senior"],NA,p=[.4,.4,.2])})
site_of=dict(zip(agents.agent_id,agents.team_id.map(dict(zip(teams.team_id,teams.site)))))
# base volume: ~1,900 tickets/month over Jan-Nov 2026, billing share 15%; billing x3 from Sep 1
days=pd.date_range("2026-01-01","2026-11-30",freq="D")
cats=np.array(["billing","login_access","bug_report","how_to","feature_request","shipping"]); cp=np.array([.15,.2,.2,.25,.1,.1])
rows=[]
for d in days:
    n=rng.poisson(62)
    c=rng.choice(cats,n,p=cp)
    if d>=pd.Timestamp("2026-09-01"):                                   # P2
        extra=rng.poisson(62*.15*2); c=np.concatenate([c,np.repeat("billing",extra)])
    for ci in c: rows.append((d+pd.Timedelta(seconds=int(rng.integers(0,86400))),ci))
t=pd.DataFrame(rows,columns=["created_at","category"]); N=len(t)
t["ticket_id"]=np.arange(1,N+1)
t["customer_tier"]=rng.choice(["free","pro","business","enterprise"],N,p=[.45,.3,.18,.07])
t["channel"]=rng.choice(["email","chat","phone","web_form"],N,p=[.35,.35,.1,.2])
t["priority"]=rng.choice(["low","normal","high","urgent"],N,p=[.3,.5,.15,.05])
t["agent_id"]=rng.integers(1,NA+1,N)
t["status"]=rng.choice(["solved","closed","open","pending"],N,p=[.55,.35,.05,.05])
t["first_response_minutes"]=np.round(rng.lognormal(3.5,0.9,N)).astype(int)
t["resolution_hours"]=np.round(rng.lognormal(2.5,1.0,N),1)
site=t.agent_id.map(site_of).values
base=np.where(site=="Manila",3.1,4.2)                                 # P1
cs=np.clip(np.round(rng.normal(base,0.9)),1,5)
surveyed=rng.random(N)<0.4
csat=np.where(surveyed,cs,np.nan)
bad=np.where((t.channel.values=="chat")&surveyed)[0]; bad=rng.choice(bad,250,replace=False)
csat[bad]=0                                                           # P3
t["csat_score"]=pd.array(np.where(np.isnan(csat),None,csat),dtype="Int64")
t["reopened"]=rng.random(N)<0.08
t["subject"]=[f"{c.replace('_',' ')} issue #{i}" for c,i in zip(t.category,t.ticket_id)]
t=t[["ticket_id","created_at","customer_tier","channel","category","priority","agent_id","status","first_response_minutes","resolution_hours","csat_score","reopened","subject"]]
con=duckdb.connect(out)
for n,df in [("teams",teams),("agents",agents),("tickets",t)]:
    con.register("df",df); con.execute(f"create table {n} as select * from df"); con.unregister("df")
q=lambda s: print(con.execute(s).fetchall())
q("select count(*) from tickets")
q("select tm.site, round(avg(csat_score) filter (where csat_score between 1 and 5),3), count(csat_score) from tickets t join agents a using(agent_id) join teams tm using(team_id) group by 1")
q("select date_trunc('month',created_at) m, count(*) filter (where category='billing'), count(*) from tickets group by 1 order by 1")
q("select channel, count(*) filter (where csat_score=0) from tickets group by 1")
