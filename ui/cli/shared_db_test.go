package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
)

// A reader that finds the database held by another process waits its turn
// instead of failing, and says what it waits for.
func TestReadersWaitForABusyDatabaseAndSaySo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	holder, err := store.Open(path, "memory index")
	if err != nil {
		t.Fatal(err)
	}
	release, err := holder.Hold()
	if err != nil {
		t.Fatal(err)
	}
	// What another process's holder note would say.
	os.WriteFile(path+".lock", []byte("4242\nmemory index\n"), 0o600)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		release()
		holder.Close()
	}()
	out, errOut, code := runCLI(t, "", "scheduler", "list", "--db", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "waiting for the database (held by pid 4242, memory index)") {
		t.Fatalf("stderr does not say what it waited for: %q", errOut)
	}
	if !strings.HasPrefix(out, "No scheduled tasks.") {
		t.Fatalf("stdout: %q", out)
	}
}
