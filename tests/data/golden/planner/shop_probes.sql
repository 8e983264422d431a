-- why: the statistical planner's first probes for a small shop schema (order, revenue, channel)
-- breakdown · main.orders: orders by status: counts, averages and rates per status
SELECT "status", count(*) AS n, count(DISTINCT "customer_id") AS entities, count("amount") AS "nn_amount", avg("amount") AS "avg_amount", stddev_samp("amount") AS "sd_amount", sum("amount") AS "sum_amount" FROM "main"."orders" GROUP BY 1 ORDER BY 1;

-- rank_breakdown · main.orders: orders: ranks of amount by status (Kruskal-Wallis)
WITH r AS (SELECT "status" AS g, "amount" AS v, rank() OVER (ORDER BY "amount") AS rk, count(*) OVER (PARTITION BY "amount") AS t FROM "main"."orders" WHERE "amount" IS NOT NULL AND "status" IS NOT NULL) SELECT g AS "status", count(*) AS n, sum(rk + (t - 1) / 2.0) AS rank_sum, sum(t * t - 1.0) AS ties, avg(v) AS mean, median(v) AS median, stddev_samp(v) AS sd FROM r GROUP BY 1 ORDER BY 1;

-- season · main.orders: orders: amount by month of year
SELECT CAST(extract(month FROM "ordered_at") AS INTEGER) AS "month_of_year", count(*) AS n, count("amount") AS "nn_amount", avg("amount") AS "avg_amount", stddev_samp("amount") AS "sd_amount" FROM "main"."orders" WHERE CAST(extract(month FROM "ordered_at") AS INTEGER) IS NOT NULL GROUP BY 1 ORDER BY 1;

-- season · main.orders: orders: amount by day of week
SELECT CAST(extract(dow FROM "ordered_at") AS INTEGER) AS "day_of_week", count(*) AS n, count("amount") AS "nn_amount", avg("amount") AS "avg_amount", stddev_samp("amount") AS "sd_amount" FROM "main"."orders" WHERE CAST(extract(dow FROM "ordered_at") AS INTEGER) IS NOT NULL GROUP BY 1 ORDER BY 1;

-- season · main.orders: orders: amount by hour of day
SELECT CAST(extract(hour FROM "ordered_at") AS INTEGER) AS "hour_of_day", count(*) AS n, count("amount") AS "nn_amount", avg("amount") AS "avg_amount", stddev_samp("amount") AS "sd_amount" FROM "main"."orders" WHERE CAST(extract(hour FROM "ordered_at") AS INTEGER) IS NOT NULL GROUP BY 1 ORDER BY 1;

-- series · main.orders: Monthly trend of orders (volume and measures)
SELECT date_trunc('month', "ordered_at") AS month, count(*) AS n, count(DISTINCT "customer_id") AS entities, count("amount") AS "nn_amount", avg("amount") AS "avg_amount", stddev_samp("amount") AS "sd_amount", sum("amount") AS "sum_amount" FROM "main"."orders" GROUP BY 1 ORDER BY 1;

-- status_switch · main.orders: orders: first and last ordered_at of each status value
SELECT "status" AS value, min("ordered_at") AS first_at, max("ordered_at") AS last_at, count(*) AS n FROM "main"."orders" GROUP BY 1 ORDER BY 1;

-- funnel · main.orders: Funnel of status by customers.country (joined on customer_id)
SELECT o."country", f."status", count(*) AS n FROM "main"."orders" f JOIN "main"."customers" o ON f."customer_id" = o."customer_id" GROUP BY 1, 2 ORDER BY 1, 2;

-- rate_series · main.orders: Monthly status mix by customers.country (joined on customer_id)
SELECT date_trunc('month', f."ordered_at") AS month, o."country", f."status", count(*) AS n FROM "main"."orders" f JOIN "main"."customers" o ON f."customer_id" = o."customer_id" GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

-- funnel · main.orders: Funnel of status by channels.channel_name (through customers) (joined on customer_id and channel_id)
SELECT o."channel_name", f."status", count(*) AS n FROM "main"."orders" f JOIN "main"."customers" m ON f."customer_id" = m."customer_id" JOIN "main"."channels" o ON m."channel_id" = o."channel_id" GROUP BY 1, 2 ORDER BY 1, 2;

-- breakdown · main.customers: customers by country: counts, averages and rates per country
SELECT "country", count(*) AS n, count(DISTINCT "channel_id") AS entities FROM "main"."customers" GROUP BY 1 ORDER BY 1;

-- retention · main.customers: Retention of customers by country: share active after day 0 and with repeat orders (churn, cohort)
WITH a AS (SELECT "customer_id" AS k, count(*) AS acts, max("ordered_at") AS last_at FROM "main"."orders" GROUP BY 1) SELECT e."country", count(*) AS entities, avg(CASE WHEN a.last_at >= e."signed_up_at" + INTERVAL 1 DAY THEN 1.0 ELSE 0.0 END) AS returned_rate, avg(CASE WHEN a.acts > 1 THEN 1.0 WHEN a.acts >= 1 THEN 0.0 END) AS repeat_rate, sum(CASE WHEN a.acts >= 1 THEN 1 ELSE 0 END) AS active FROM "main"."customers" e LEFT JOIN a ON a.k = e."customer_id" GROUP BY 1 ORDER BY 1;

-- concentration · main.orders: Concentration of amount across customer_id in orders (top 1%, 5%, 10% share)
WITH e AS (SELECT "customer_id" AS entity, sum("amount") AS v FROM "main"."orders" WHERE "customer_id" IS NOT NULL GROUP BY 1), r AS (SELECT v, row_number() OVER (ORDER BY v DESC) AS rk, count(*) OVER () AS n FROM e) SELECT max(n) AS entities, sum(v) AS total, sum(CASE WHEN rk <= ceil(n * 0.01) THEN v ELSE 0 END) AS top1, sum(CASE WHEN rk <= ceil(n * 0.05) THEN v ELSE 0 END) AS top5, sum(CASE WHEN rk <= ceil(n * 0.10) THEN v ELSE 0 END) AS top10, sum((n - rk + 1) * v) AS weighted FROM r;

-- series · main.customers: Monthly trend of customers (volume and measures)
SELECT date_trunc('month', "signed_up_at") AS month, count(*) AS n, count(DISTINCT "channel_id") AS entities FROM "main"."customers" GROUP BY 1 ORDER BY 1;
