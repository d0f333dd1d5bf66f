package tasks

import (
	"time"

	"github.com/asdine/storm/v3"
)

// Peer is a scheduler serving the database, as it last described itself:
// which process it is, whether it is a dedicated scheduler (`jarvis
// scheduler start`) that other processes leave scheduled runs to, the
// server it is configured for, and which servers it could reach when it
// last looked. Every serving scheduler writes its own entry now and then
// (a heartbeat) and removes it when it stops; an entry past Expires, or
// whose process is gone, describes nobody.
type Peer struct {
	ID        string    `json:"id"`
	Process   Process   `json:"process"`
	Dedicated bool      `json:"dedicated,omitempty"`
	Server    Server    `json:"server,omitzero"`
	Started   time.Time `json:"started"`
	Beat      time.Time `json:"beat"`
	Expires   time.Time `json:"expires"`
	// Reach maps Server.Key() to whether the peer reached that server at
	// its last check, for the servers it checked recently.
	Reach map[string]bool `json:"reach,omitempty"`
}

// peerRow is a Peer as stored, in the "peers" bucket under the scheduler
// root. There is one row per serving scheduler, so a bucket scan is cheap.
type peerRow struct {
	ID        string `storm:"id"`
	Process   Process
	Dedicated bool
	Server    Server
	Started   time.Time
	Beat      time.Time
	Expires   time.Time
	Reach     map[string]bool
}

func peers(n storm.Node) storm.Node { return n.From("peers") }

// Beat writes p's entry and removes the entries named in drop (peers found
// dead), in one transaction.
func (s *Store) Beat(p Peer, drop ...string) error {
	return s.update(func(n storm.Node) error {
		node := peers(n)
		for _, id := range drop {
			if id == p.ID {
				continue
			}
			if err := node.DeleteStruct(&peerRow{ID: id}); err != nil && !notFound(err) {
				return err
			}
		}
		row := peerRow(p)
		row.Beat, row.Expires, row.Started = row.Beat.UTC(), row.Expires.UTC(), row.Started.UTC()
		return node.Save(&row)
	})
}

// Leave removes a peer's entry: its scheduler stopped.
func (s *Store) Leave(id string) error {
	return s.update(func(n storm.Node) error {
		err := peers(n).DeleteStruct(&peerRow{ID: id})
		if notFound(err) {
			return nil
		}
		return err
	})
}

// Peers returns every entry, live or not; judging liveness (the heartbeat,
// whether the pid still runs) is the scheduler's business.
func (s *Store) Peers() ([]Peer, error) {
	var rows []peerRow
	err := s.view(func(n storm.Node) error { return peers(n).All(&rows) })
	if err != nil && !notFound(err) {
		return nil, err
	}
	out := make([]Peer, len(rows))
	for i, r := range rows {
		out[i] = Peer(r)
	}
	return out, nil
}
