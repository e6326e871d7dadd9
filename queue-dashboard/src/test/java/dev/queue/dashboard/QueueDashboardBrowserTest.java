package dev.queue.dashboard;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard in a real headless Chromium: every page, a message followed from the overview to its explanation,
 * a redrive, a schedule paused and resumed, and a write without the token refused. Skipped when no browser is
 * installed, except on CI (CI=true), where that fails. With -Ddashboard.screenshots=DIR (or env
 * DASHBOARD_SCREENSHOTS) it saves the main pages as PNG files there, as docs/img holds them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("slow")
class QueueDashboardBrowserTest {

    private static final String TOKEN = "browser-token-of-the-tests";
    private static final String NS = "shop";
    private Database db;
    private QueueDashboard.Server server;
    private WebDriver browser;
    private WebDriverWait wait;
    private Path screenshots;
    private String missing;
    private long orderId;

    @BeforeAll
    void start() throws Exception {
        File chromium = executable(System.getenv().getOrDefault("CHROMIUM_BINARY", "/usr/bin/chromium"));
        File driver = executable(System.getenv().getOrDefault("CHROMEDRIVER", "/usr/bin/chromedriver"));
        missing = chromium == null ? "no chromium at /usr/bin/chromium (or CHROMIUM_BINARY)"
                : driver == null ? "no chromedriver at /usr/bin/chromedriver (or CHROMEDRIVER)" : null;
        if (missing != null) {
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException(missing + ": CI=true needs the browser test (apt-get install chromium chromium-driver)");
            }
            // each test then reports itself skipped with this reason (an abort here would hide it in surefire's report)
            missing += ": install chromium and chromium-driver to run the browser test";
            return;
        }
        String dir = System.getProperty("dashboard.screenshots", System.getenv("DASHBOARD_SCREENSHOTS"));
        screenshots = dir == null || dir.isBlank() ? null : Files.createDirectories(Path.of(dir));

        db = new Database();
        db.push(NS, "email", "");
        orderId = db.push(NS, "email", ", p_unique_key := 'order-1001'");
        db.push(NS, "reports", ", p_run_at := now() - interval '1 hour'");
        db.dead(NS, "sms", "no route to +44 20 7946 0000");
        db.dead(NS, "billing", "card declined");
        db.schedule(NS, "nightly", "reports");
        db.worker(NS, "worker-1", "email");
        server = QueueDashboard.builder(db.operator).namespaces(List.of(NS)).writeToken(TOKEN).build().start(0);

        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium);
        // as root Chromium runs only without its sandbox; /dev/shm is small in containers
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,800");
        // the Debian driver matches the Debian browser: no Selenium Manager download
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        wait = new WebDriverWait(browser, Duration.ofSeconds(20));
    }

    @BeforeEach
    void needsTheBrowser() {
        Assumptions.assumeTrue(missing == null, missing);
    }

    private static File executable(String path) {
        File file = new File(path);
        return file.canExecute() ? file : null;
    }

    @AfterAll
    void stop() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        if (server != null) {
            server.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private void open(String path) {
        browser.get("http://localhost:" + server.port() + path);
    }

    private void heading(String text) {
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.tagName("h1"), text));
    }

    private String text() {
        return browser.findElement(By.tagName("body")).getText();
    }

    private void screenshot(String name) throws IOException {
        if (screenshots != null) {
            File png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
            Files.copy(png.toPath(), screenshots.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    @Test
    void followsAMessageFromTheOverviewToItsExplanation() throws IOException {
        open("/");
        heading("Overview");
        assertThat(text()).contains("Namespace shop", "email", "sms", "billing");
        screenshot("dashboard-overview");

        browser.findElement(By.linkText("sms")).click();
        heading("Topic sms (shop)");
        assertThat(text()).contains("no route to +44 20 7946 0000");
        screenshot("dashboard-topic");

        browser.findElement(By.cssSelector("table.dead td a")).click();
        heading("Message ");
        assertThat(browser.findElement(By.className("verdict")).getText()).isNotBlank();
        assertThat(browser.findElement(By.className("facts")).getText()).contains("state", "dead", "no route");
        screenshot("dashboard-message");
    }

    @Test
    void redrivesADeadLetterAfterRefusingItWithoutTheToken() throws IOException {
        open("/dead?ns=" + NS);
        heading("Dead letters (shop)");
        screenshot("dashboard-dead-letters");
        String row = browser.findElement(By.xpath("//tr[td[contains(., 'card declined')]]")).getAttribute("id");

        browser.findElement(By.cssSelector("#" + row + " a.redrive")).click();
        heading("Confirm redrive");
        assertThat(browser.findElement(By.className("count")).getText()).contains(": 1 message");
        browser.findElement(By.cssSelector("button[name=confirm]")).click();
        heading("Refused");
        assertThat(text()).contains("a write needs the write token");

        open("/dead?ns=" + NS);
        heading("Dead letters (shop)");
        assertThat(browser.findElements(By.id(row))).hasSize(1);
        browser.findElement(By.cssSelector("#" + row + " a.redrive")).click();
        heading("Confirm redrive");
        browser.findElement(By.name("token")).sendKeys(TOKEN);
        browser.findElement(By.cssSelector("button[name=confirm]")).click();
        heading("Redriven");
        assertThat(text()).contains("Redrove 1 of 1");

        browser.findElement(By.linkText("dead letters")).click();
        heading("Dead letters (shop)");
        wait.until(ExpectedConditions.numberOfElementsToBe(By.id(row), 0));
        assertThat(text()).contains("no route").doesNotContain("card declined");
    }

    @Test
    void pausesAndResumesASchedule() throws IOException {
        open("/schedules?ns=" + NS);
        heading("Schedules (shop)");
        screenshot("dashboard-schedules");
        By state = By.cssSelector("#schedule-nightly td.state");
        assertThat(browser.findElement(state).getText()).isEqualTo("active");

        browser.findElement(By.cssSelector("#schedule-nightly form.pause input[name=token]")).sendKeys(TOKEN);
        browser.findElement(By.cssSelector("#schedule-nightly form.pause button")).click();
        heading("Schedule nightly");
        assertThat(text()).contains("Paused schedule nightly.");
        browser.findElement(By.linkText("schedules")).click();
        wait.until(ExpectedConditions.textToBe(state, "paused"));

        browser.findElement(By.cssSelector("#schedule-nightly form.resume input[name=token]")).sendKeys(TOKEN);
        browser.findElement(By.cssSelector("#schedule-nightly form.resume button")).click();
        heading("Schedule nightly");
        assertThat(text()).contains("Resumed schedule nightly.");
        browser.findElement(By.linkText("schedules")).click();
        wait.until(ExpectedConditions.textToBe(state, "active"));
    }

    @Test
    void findsAMessageByItsUniqueKeyAndOpensIt() {
        open("/");
        heading("Overview");
        browser.findElement(By.cssSelector("form.find-key input[name=key]")).sendKeys("order-1001");
        browser.findElement(By.cssSelector("form.find-key button")).click();
        heading("Unique key order-1001 (shop)");
        assertThat(browser.findElement(By.className("searched")).getText()).contains("every topic");
        browser.findElement(By.cssSelector("#found-" + orderId + " a")).click();
        heading("Message " + orderId + " (shop)");
        assertThat(browser.findElement(By.className("facts")).getText()).contains("unique key", "order-1001", "pending");
    }

    @Test
    void pausesAndResumesATopic() {
        open("/topic?ns=" + NS + "&topic=reports");
        heading("Topic reports (shop)");
        browser.findElement(By.cssSelector("form.pause input[name=token]")).sendKeys(TOKEN);
        browser.findElement(By.cssSelector("form.pause button")).click();
        heading("Topic reports");
        assertThat(text()).contains("Paused topic reports.");
        browser.findElement(By.linkText("back to the topic")).click();
        heading("Topic reports (shop)");
        assertThat(browser.findElement(By.className("flow")).getText()).startsWith("Paused");
        open("/");
        heading("Overview");
        assertThat(browser.findElement(By.cssSelector("#topic-reports .paused")).getText()).isEqualTo("paused");

        open("/topic?ns=" + NS + "&topic=reports");
        heading("Topic reports (shop)");
        browser.findElement(By.cssSelector("form.resume input[name=token]")).sendKeys(TOKEN);
        browser.findElement(By.cssSelector("form.resume button")).click();
        heading("Topic reports");
        assertThat(text()).contains("Resumed topic reports.");
        open("/");
        heading("Overview");
        assertThat(browser.findElements(By.cssSelector("#topic-reports .paused"))).isEmpty();
    }

    @Test
    void showsWorkersAndHealth() throws IOException {
        open("/");
        heading("Overview");
        browser.findElement(By.linkText("Workers")).click();
        heading("Workers");
        assertThat(text()).contains("worker-1", "alive", "host-a");
        screenshot("dashboard-workers");

        browser.findElement(By.linkText("Health")).click();
        heading("Health");
        assertThat(text()).contains("no_subscriber (shop/reports)", "to do:");
        screenshot("dashboard-health");
    }
}
