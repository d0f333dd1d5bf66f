package sessions

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/asdine/storm/v3"
)

// Image is an image attached to a message. Stored, it is its hash and
// what is shown of it; Data, the bytes, travels with a message being
// appended (and is stored once per content) and is filled by FillImages.
type Image struct {
	// SHA256 is the hex digest of the bytes: the key of the stored copy.
	// Append computes it when it is empty, and refuses bytes that do not
	// match it.
	SHA256   string `json:"sha256"`
	Name     string `json:"name,omitempty"`
	MIMEType string `json:"mime_type"`
	// Bytes is the size of the image data.
	Bytes  int    `json:"bytes"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	Data   []byte `json:"data,omitempty"`
}

// Buckets of the image store, under the package's root.
const (
	blobBucket = "blobs"
	refBucket  = "blobrefs"
)

// Hash returns the SHA-256 of data in hex, the key images are stored
// under.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// storeImages stores the bytes of images not stored yet, counts one more
// reference to each, and returns them as a message keeps them (without
// the bytes). An image without bytes must already be stored (a copy made
// by a fork).
func storeImages(n storm.Node, images []Image) ([]Image, error) {
	if len(images) == 0 {
		return nil, nil
	}
	out := make([]Image, len(images))
	for i, im := range images {
		if len(im.Data) > 0 {
			sum := Hash(im.Data)
			if im.SHA256 != "" && !strings.EqualFold(im.SHA256, sum) {
				return nil, fmt.Errorf("image %s: its bytes do not match its hash %s", im.Name, im.SHA256)
			}
			im.SHA256, im.Bytes = sum, len(im.Data)
			stored, err := blobExists(n, sum)
			if err != nil {
				return nil, err
			}
			if !stored {
				if err := n.SetBytes(blobBucket, sum, im.Data); err != nil {
					return nil, err
				}
			}
		} else if stored, err := blobExists(n, im.SHA256); err != nil || !stored {
			return nil, fmt.Errorf("image %s (%s) is not stored and came without its bytes", im.Name, im.SHA256)
		}
		if err := addRef(n, im.SHA256, 1); err != nil {
			return nil, err
		}
		im.Data = nil
		out[i] = im
	}
	return out, nil
}

// blobExists reports whether the bytes of an image are stored, without
// reading them.
func blobExists(n storm.Node, sum string) (bool, error) {
	ok, err := n.KeyExists(blobBucket, sum)
	if notFound(err) || errors.Is(err, storm.ErrNotFound) {
		return false, nil
	}
	return ok, err
}

// releaseImages drops one reference to each image, and its bytes with
// the last one.
func releaseImages(n storm.Node, images []Image) error {
	for _, im := range images {
		if err := addRef(n, im.SHA256, -1); err != nil {
			return err
		}
	}
	return nil
}

// addRef changes the reference count of a stored image by delta,
// deleting the image when no message references it any more.
func addRef(n storm.Node, sum string, delta int) error {
	count := int64(0)
	raw, err := n.GetBytes(refBucket, sum)
	switch {
	case err == nil && len(raw) == 8:
		count = int64(binary.BigEndian.Uint64(raw))
	case err != nil && !notFound(err):
		return err
	}
	count += int64(delta)
	if count > 0 {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(count))
		return n.SetBytes(refBucket, sum, b[:])
	}
	for _, bucket := range []string{refBucket, blobBucket} {
		if err := n.Delete(bucket, sum); err != nil && !notFound(err) {
			return err
		}
	}
	return nil
}

// FillImages reads the bytes of the images of msgs (those without them),
// in one read. A missing image is an error that names it.
func (s *Store) FillImages(msgs []Message) error {
	need := false
	for _, m := range msgs {
		for _, im := range m.Images {
			need = need || len(im.Data) == 0
		}
	}
	if !need {
		return nil
	}
	return s.view(func(n storm.Node) error {
		for i := range msgs {
			for j := range msgs[i].Images {
				im := &msgs[i].Images[j]
				if len(im.Data) > 0 {
					continue
				}
				data, err := n.GetBytes(blobBucket, im.SHA256)
				if err != nil {
					if notFound(err) {
						err = errors.New("it is not in the database")
					}
					return fmt.Errorf("cannot read image %s of message %d: %w", im.Name, msgs[i].Seq, err)
				}
				im.Data = data
			}
		}
		return nil
	})
}
