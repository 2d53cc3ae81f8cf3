// docs/clients.md, Java: pgjdbc's generated keys with a primary key whose DEFAULT is
// snowflake_next(), row by row (what Hibernate does for GenerationType.IDENTITY), in a
// batch, and in a batch that reWriteBatchedInserts turns into multi-row INSERTs: each key
// is its row's id, and the keys of one statement or of one session rise.
// Run by tests/clients.sh as a single source file (java -cp postgresql.jar JdbcRecipes.java),
// against the stock server over TCP on 127.0.0.1 (pgjdbc has no Unix sockets of its own),
// its port in PGPORT.

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

public class JdbcRecipes {
    static final String URL =
        "jdbc:postgresql://127.0.0.1:" + System.getenv("PGPORT") + "/postgres?user=postgres";
    static final String INSERT = "INSERT INTO jdbc_orders (item) VALUES (?)";

    static void check(boolean condition, String message) {
        if (!condition) throw new AssertionError(message);
    }

    // The keys, given in the order of items, are their rows' ids (a plain SELECT on a
    // connection of its own), distinct and strictly rising.
    static void sameIdsRising(List<String> items, List<Long> keys, String what) throws SQLException {
        check(items.size() == keys.size(), what + ": " + keys.size() + " keys for " + items.size() + " rows");
        Map<String, Long> table = new HashMap<>();
        try (Connection reader = DriverManager.getConnection(URL);
             ResultSet rs = reader.createStatement().executeQuery("SELECT item, id FROM jdbc_orders")) {
            while (rs.next()) table.put(rs.getString(1), rs.getLong(2));
        }
        for (int i = 0; i < items.size(); i++) {
            Long key = keys.get(i), id = table.get(items.get(i));
            check(key.equals(id), what + ": key " + key + " for " + items.get(i) + ", the table has " + id);
            if (i > 0) check(keys.get(i - 1) < key, what + ": key " + key + " follows " + keys.get(i - 1));
        }
    }

    static List<String> items(String prefix, int count) {
        List<String> items = new ArrayList<>();
        for (int n = 0; n < count; n++) items.add(prefix + " " + n);
        return items;
    }

    static List<Long> keys(PreparedStatement statement) throws SQLException {
        List<Long> keys = new ArrayList<>();
        try (ResultSet rs = statement.getGeneratedKeys()) {
            while (rs.next()) keys.add(rs.getLong("id"));
        }
        return keys;
    }

    static String rowByRow() throws SQLException {
        List<String> items = items("single", 50);
        List<Long> keys = new ArrayList<>();
        try (Connection conn = DriverManager.getConnection(URL);
             PreparedStatement insert = conn.prepareStatement(INSERT, new String[] {"id"})) {
            for (String item : items) {
                insert.setString(1, item);
                check(insert.executeUpdate() == 1, "an INSERT did not insert one row");
                keys.addAll(keys(insert));
            }
        }
        sameIdsRising(items, keys, "row by row");
        return "50 INSERTs, getGeneratedKeys() each its row's id, rising from statement to statement";
    }

    static String batch(String prefix, String options) throws SQLException {
        List<String> items = items(prefix, 1000);
        try (Connection conn = DriverManager.getConnection(URL + options);
             PreparedStatement insert = conn.prepareStatement(INSERT, new String[] {"id"})) {
            for (String item : items) {
                insert.setString(1, item);
                insert.addBatch();
            }
            insert.executeBatch();
            sameIdsRising(items, keys(insert), prefix);
        }
        return "1000 rows, getGeneratedKeys() in batch order, each its row's id, rising";
    }

    public static void main(String[] args) throws SQLException {
        try (Connection conn = DriverManager.getConnection(URL)) {
            conn.createStatement().execute("DROP TABLE IF EXISTS jdbc_orders");
            conn.createStatement().execute(
                "CREATE TABLE jdbc_orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text UNIQUE)");
        }
        Map<String, Callable<String>> recipes = new LinkedHashMap<>();
        recipes.put("pgjdbc: prepareStatement(sql, {\"id\"}), executeUpdate, getGeneratedKeys",
                    JdbcRecipes::rowByRow);
        recipes.put("pgjdbc: addBatch, executeBatch, getGeneratedKeys", () -> batch("batch", ""));
        recipes.put("pgjdbc: the same with reWriteBatchedInserts=true",
                    () -> batch("rewritten", "&reWriteBatchedInserts=true"));
        int failed = 0;
        for (Map.Entry<String, Callable<String>> recipe : recipes.entrySet()) {
            try {
                System.out.println("ok " + recipe.getKey() + ": " + recipe.getValue().call());
            } catch (Throwable error) {
                failed++;
                System.out.println("FAIL " + recipe.getKey() + ": " + error);
            }
        }
        System.exit(failed == 0 ? 0 : 1);
    }
}
