import duckdb, numpy as np, pandas as pd, os, sys
rng = np.random.default_rng(33)
out = os.path.join(sys.argv[1], "logistics.duckdb")
if os.path.exists(out): os.remove(out)
NC=5000
customers=pd.DataFrame({"customer_id":np.arange(1,NC+1),
  "customer_name":[f"Customer {i:04d}" for i in range(1,NC+1)],
  "segment":rng.choice(["smb","mid_market","enterprise"],NC,p=[.6,.28,.12]),
  "region":rng.choice(["DACH","Benelux","Nordics","France","Iberia","UK"],NC),
  "created_at":(pd.Timestamp("2022-01-01")+pd.to_timedelta(rng.integers(0,1400,NC),unit="D")).date})
depots=pd.DataFrame({"depot_id":[1,2,3,4,5,6],"depot_city":["Leipzig","Rotterdam","Lyon","Madrid","Malmo","Birmingham"],
  "country":["DE","NL","FR","ES","SE","GB"]})
NO=20000
odate=pd.Timestamp("2026-01-01")+pd.to_timedelta(rng.integers(0,320,NO),unit="D")
orders=pd.DataFrame({"order_id":np.arange(700001,700001+NO),"customer_id":rng.integers(1,NC+1,NO),
  "order_date":odate.date,"order_value_eur":np.round(rng.lognormal(6,1,NO),2),
  "priority":rng.choice(["standard","express","economy"],NO,p=[.6,.2,.2])})
# shipments: each order 1-2 shipments
k=rng.choice([1,2],NO,p=[.5,.5]); oidx=np.repeat(np.arange(NO),k); N=len(oidx)
carriers=np.array(["DHL Freight","DB Schenker","SwiftFreight","Kuehne+Nagel","GLS","PostNL"])
carrier=rng.choice(carriers,N,p=[.25,.2,.15,.15,.15,.1])
depot=rng.integers(1,7,N)
ship=pd.to_datetime(orders.order_date.values[oidx])+pd.to_timedelta(rng.integers(0,3,N),unit="D")
prio=orders.priority.values[oidx]
transit=np.select([prio=="express",prio=="standard"],[2,4],6)
promised=ship+pd.to_timedelta(transit,unit="D")
p_late=np.where(carrier=="SwiftFreight",0.32,0.09)                   # P1
late=rng.random(N)<p_late
actual=np.where(late,transit+rng.integers(1,6,N),transit-rng.integers(0,2,N))
delivered=ship+pd.to_timedelta(actual,unit="D")
seg=orders.customer_id.map(dict(zip(customers.customer_id,customers.segment))).values[oidx]
p_ret=np.where(seg=="enterprise",0.11,0.03)                           # P2
u=rng.random(N)
status=np.where(u<p_ret,"returned",np.where(u<p_ret+0.01,"lost","delivered"))
status=np.where(delivered>pd.Timestamp("2026-11-20"),"in_transit",status)
weight=np.round(rng.gamma(2,40,N),1); dist=np.round(rng.uniform(50,1500,N),0)
rate=0.0009*np.ones(N)
rate=np.where((depot==1)&(ship>=pd.Timestamp("2026-07-01")),rate*1.3,rate)   # P3
cost=np.round(12+rate*weight*dist*rng.normal(1,0.08,N),2)
shipments=pd.DataFrame({"shipment_id":[f"SHP{i:06d}" for i in range(1,N+1)],"order_id":orders.order_id.values[oidx],
 "origin_depot_id":depot,"carrier":carrier,"ship_date":ship.date,"promised_date":promised.date,
 "delivered_date":pd.Series(delivered.date).where(status!="in_transit").where(status!="lost").values,
 "status":status,"weight_kg":weight,"distance_km":dist,"shipping_cost_eur":cost})
con=duckdb.connect(out)
for n,df in [("customers",customers),("depots",depots),("orders",orders),("shipments",shipments)]:
    con.register("df",df); con.execute(f"create table {n} as select * from df"); con.unregister("df")
q=lambda s: print(con.execute(s).fetchall())
q("select carrier='SwiftFreight', round(avg((delivered_date>promised_date)::int),4), count(*) from shipments where delivered_date is not null group by 1")
q("select c.segment, round(avg((s.status='returned')::int),4), count(*) from shipments s join orders o using(order_id) join customers c using(customer_id) group by 1")
q("select origin_depot_id=1, ship_date>='2026-07-01', round(avg(shipping_cost_eur/(weight_kg*distance_km)),6) from shipments where weight_kg>0 group by all order by all")
q("select origin_depot_id=1, ship_date>='2026-07-01', round(avg(shipping_cost_eur),2) from shipments group by all order by all")
