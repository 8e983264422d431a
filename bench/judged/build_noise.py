# control: a marketplace warehouse with NO planted pattern (all columns independent, uniform over time)
import duckdb, numpy as np, pandas as pd, os, sys
rng=np.random.default_rng(55); out=os.path.join(sys.argv[1], "noise_market.duckdb")
if os.path.exists(out): os.remove(out)
NS=400; sellers=pd.DataFrame({"seller_id":range(1,NS+1),"seller_country":rng.choice(["IT","DE","PL","FR","ES"],NS),
 "seller_tier":rng.choice(["bronze","silver","gold"],NS,p=[.6,.3,.1]),"joined_on":(pd.Timestamp("2023-01-01")+pd.to_timedelta(rng.integers(0,1000,NS),unit="D")).date})
NB=8000; buyers=pd.DataFrame({"buyer_id":range(1,NB+1),"buyer_city":rng.choice(["Milan","Berlin","Warsaw","Paris","Madrid","Lyon","Munich","Krakow"],NB),
 "device":rng.choice(["ios","android","web"],NB,p=[.4,.35,.25])})
N=35000; created=pd.Timestamp("2026-01-01")+pd.to_timedelta(rng.integers(0,334*24*60,N),unit="min")
orders=pd.DataFrame({"order_id":range(1,N+1),"buyer_id":rng.integers(1,NB+1,N),"seller_id":rng.integers(1,NS+1,N),"created_at":created,
 "category":rng.choice(["fashion","electronics","home","toys","books","sports"],N),
 "item_price_eur":np.round(rng.lognormal(3.3,0.8,N),2),"quantity":rng.integers(1,4,N),
 "status":rng.choice(["completed","cancelled","refunded","disputed"],N,p=[.86,.07,.05,.02]),
 "payment_method":rng.choice(["card","paypal","klarna","apple_pay"],N,p=[.5,.25,.15,.1]),
 "rating":pd.array(np.where(rng.random(N)<0.5,rng.integers(1,6,N),-1),dtype="Int64")})
orders.loc[orders.rating==-1,"rating"]=pd.NA
con=duckdb.connect(out)
for n,df in [("sellers",sellers),("buyers",buyers),("orders",orders)]:
    con.register("df",df); con.execute(f"create table {n} as select * from df"); con.unregister("df")
print(con.execute("select count(*) from orders").fetchall())
