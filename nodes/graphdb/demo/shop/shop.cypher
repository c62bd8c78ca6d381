// The shop example graph: categories, suppliers, products, customers and their orders.
// Written the way Neo4j's example datasets write their imports. Load it with
//   reflexion load shop.cypher --graph shop --csv-dir <the folder of the CSV files>
// (the CSV files sit beside this script, so --csv-dir may be left out).

CREATE CONSTRAINT category_id IF NOT EXISTS FOR (c:Category) REQUIRE c.categoryID IS UNIQUE;
CREATE CONSTRAINT supplier_id IF NOT EXISTS FOR (s:Supplier) REQUIRE s.supplierID IS UNIQUE;
CREATE CONSTRAINT product_id IF NOT EXISTS FOR (p:Product) REQUIRE p.productID IS UNIQUE;
CREATE CONSTRAINT customer_id IF NOT EXISTS FOR (c:Customer) REQUIRE c.customerID IS UNIQUE;
CREATE CONSTRAINT order_id IF NOT EXISTS FOR (o:Order) REQUIRE o.orderID IS UNIQUE;
CREATE INDEX product_name IF NOT EXISTS FOR (p:Product) ON (p.productName);

LOAD CSV WITH HEADERS FROM 'https://data.example.org/shop/categories.csv' AS row
MERGE (c:Category {categoryID: row.categoryID})
SET c.categoryName = row.categoryName, c.description = row.description;

LOAD CSV WITH HEADERS FROM 'https://data.example.org/shop/suppliers.csv' AS row
MERGE (s:Supplier {supplierID: row.supplierID})
SET s.companyName = row.companyName, s.city = row.city, s.country = row.country,
    s.postalCode = row.postalCode;

// Product 42 has no stock figure and no discontinued flag: those properties stay unset.
LOAD CSV WITH HEADERS FROM 'https://data.example.org/shop/products.csv' AS row
MERGE (p:Product {productID: row.productID})
SET p.productName = row.productName, p.unitPrice = toFloat(row.unitPrice),
    p.unitsInStock = toInteger(row.unitsInStock), p.discontinued = (row.discontinued = 'true')
WITH p, row
MATCH (c:Category {categoryID: row.categoryID})
MERGE (p)-[:PART_OF]->(c)
WITH p, row
MATCH (s:Supplier {supplierID: row.supplierID})
MERGE (s)-[:SUPPLIES]->(p);

LOAD CSV WITH HEADERS FROM 'https://data.example.org/shop/customers.csv' AS row
MERGE (c:Customer {customerID: row.customerID})
SET c.companyName = row.companyName, c.contactName = row.contactName, c.city = row.city,
    c.country = row.country, c.postalCode = row.postalCode;

USING PERIODIC COMMIT 100
LOAD CSV WITH HEADERS FROM 'https://data.example.org/shop/orders.csv' AS row
MERGE (o:Order {orderID: row.orderID})
SET o.orderDate = row.orderDate, o.shipCity = row.shipCity, o.shipCountry = row.shipCountry,
    o.freight = toFloat(row.freight)
WITH o, row
MATCH (c:Customer {customerID: row.customerID})
MERGE (c)-[:PURCHASED]->(o);

LOAD CSV WITH HEADERS FROM 'https://data.example.org/shop/order_details.csv' AS row
CALL {
  WITH row
  MATCH (o:Order {orderID: row.orderID})
  MATCH (p:Product {productID: row.productID})
  MERGE (o)-[d:ORDERS]->(p)
  SET d.unitPrice = toFloat(row.unitPrice), d.quantity = toInteger(row.quantity),
      d.discount = toFloat(row.discount)
} IN TRANSACTIONS OF 200 ROWS;

// Customers who brought other customers to the shop: a relationship that joins a label to itself.
LOAD CSV WITH HEADERS FROM 'https://data.example.org/shop/referrals.csv' AS row
MATCH (a:Customer {customerID: row.referrerID})
MATCH (b:Customer {customerID: row.referredID})
MERGE (a)-[r:REFERRED]->(b)
SET r.since = toInteger(row.since);
