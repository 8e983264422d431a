import duckdb, numpy as np, pandas as pd, os, sys
rng = np.random.default_rng(22)
out = os.path.join(sys.argv[1], "clinic.duckdb")
if os.path.exists(out): os.remove(out)
clinics=pd.DataFrame({"clinic_id":range(1,9),
  "clinic_name":["Harbor View","Maple Street","Riverside","Oak Park","Eastgate","Sunrise Medical","Hillcrest","Eastbrook"],
  "region":["Westside","Central","Westside","Central","Eastside","Northside","Northside","Eastside"]})
NP=12000
patients=pd.DataFrame({"patient_id":np.arange(200001,200001+NP),
  "birth_year":rng.integers(1935,2022,NP),
  "sex":rng.choice(["F","M","X",None],NP,p=[.51,.47,.01,.01]),
  "insurance_type":rng.choice(["private","medicare","medicaid","self_pay"],NP,p=[.5,.2,.2,.1]),
  "home_clinic_id":rng.integers(1,9,NP),
  "registered_at":(pd.Timestamp("2018-01-01")+pd.to_timedelta(rng.integers(0,3000,NP),unit="D")).date})
depts=["general_practice","cardiology","dermatology","orthopedics","pediatrics","gynecology"]
ND=60
doctors=pd.DataFrame({"doctor_id":range(1,ND+1),"doctor_name":[f"Dr. {n}" for n in rng.choice(["Adams","Baker","Chen","Diaz","Evans","Fischer","Garcia","Hughes","Ito","Jones","Khan","Lopez","Moreau","Novak","Olsen","Patel"],ND)],
  "department":rng.choice(depts,ND,p=[.35,.13,.13,.13,.13,.13]),"years_experience":rng.integers(1,35,ND),"clinic_id":rng.integers(1,9,ND)})
N=40000
sched=pd.Timestamp("2026-01-05")+pd.to_timedelta(rng.integers(0,330,N),unit="D")+pd.to_timedelta(rng.choice(np.arange(8,18),N),unit="h")
lead=np.minimum(rng.exponential(14,N).astype(int),90)
booked=sched-pd.to_timedelta(lead,unit="D")-pd.to_timedelta(rng.integers(0,8,N),unit="h")
pid=rng.choice(patients.patient_id,N)
region=pd.Series(pid).map(dict(zip(patients.patient_id,patients.home_clinic_id.map(dict(zip(clinics.clinic_id,clinics.region)))))).values
channel=rng.choice(["phone","online","front_desk","referral"],N,p=[.4,.35,.15,.1])
p_ns=0.04+0.004*np.minimum(lead,60)                     # P1
p_ns=np.where(region=="Eastside",p_ns*2.2,p_ns)         # P2
p_c=np.full(N,0.07)
p_c[(channel=="online")&(sched>=pd.Timestamp("2026-05-01"))]=0.20   # P3
u=rng.random(N)
status=np.where(u<p_ns,"no_show",np.where(u<p_ns+p_c,"cancelled","completed"))
# a few future-ish scheduled ones
status=np.where(sched>pd.Timestamp("2026-11-25"),"scheduled",status)
appts=pd.DataFrame({"appointment_id":np.arange(1,N+1),"patient_id":pid,"doctor_id":rng.integers(1,ND+1,N),
  "scheduled_for":sched,"booked_at":booked,"lead_time_days":lead,"booking_channel":channel,
  "visit_type":rng.choice(["follow_up","new_patient","annual_physical","procedure","telehealth"],N,p=[.4,.2,.15,.1,.15]),
  "status":status,"reminder_sent":rng.random(N)<0.8,
  "notes":rng.choice([None,None,None,"patient requested morning slot","interpreter needed","bring prior imaging","fasting required"],N)})
appts=appts.sort_values("scheduled_for").reset_index(drop=True); appts["appointment_id"]=np.arange(1,N+1)
con=duckdb.connect(out)
for n,df in [("clinics",clinics),("patients",patients),("doctors",doctors),("appointments",appts)]:
    con.register("df",df); con.execute(f"create table {n} as select * from df"); con.unregister("df")
q=lambda s: print(con.execute(s).fetchall())
q("select c.region='Eastside', round(avg((a.status='no_show')::int),4), count(*) from appointments a join patients p using(patient_id) join clinics c on c.clinic_id=p.home_clinic_id group by 1")
q("select least(lead_time_days//15,4) b, round(avg((status='no_show')::int),4), count(*) from appointments group by 1 order by 1")
q("select scheduled_for>='2026-05-01', round(avg((status='cancelled')::int),4), count(*) from appointments where booking_channel='online' group by 1")
q("select corr(lead_time_days, (status='no_show')::int) from appointments")
