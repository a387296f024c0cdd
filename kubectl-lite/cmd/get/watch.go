package get

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// watch prints every change as it arrives, until the server ends the
// stream or the command is interrupted.
func watch(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, watchEvents bool) error {
	return watchWith(cmd, d, p, info, lo, watchEvents, nil)
}

// watchFiltered is watch printing only the objects keep accepts.
func watchFiltered(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, keep func(printers.Obj) bool) error {
	return watchWith(cmd, d, p, info, lo, false, keep)
}

func watchWith(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, watchEvents bool, keep func(printers.Obj) bool) error {
	w, err := d.Watch(cmd.Context(), lo)
	if err != nil {
		return err
	}
	return eachEvent(cmd.Context(), w, func(typ string, obj *client.Unstructured) error {
		if keep != nil && !keep(obj.Object) {
			return nil
		}
		if watchEvents {
			p.event = typ
		}
		return p.printWatched(info, obj.Object)
	})
}

// watchTables prints a watch of tables, as kubectl get -w does: each
// event's one-row table continues the table printed so far (its columns,
// its widths), with the event type first with --output-watch-events.
func watchTables(cmd *cobra.Command, tc *client.TableClient, p *printer, info api.ResourceInfo, lo client.ListOptions, watchEvents bool) error {
	w, err := tc.Watch(cmd.Context(), lo)
	if err != nil {
		return err
	}
	if p.tables == nil {
		p.startTable(info)
	}
	return eachEvent(cmd.Context(), w, func(typ string, obj *client.TableAnswer) error {
		event := ""
		if watchEvents {
			event = typ
		}
		return p.printTable(tableOf(obj), event)
	})
}

// eachEvent hands each object event of w to f until the watch or ctx
// ends; an Error event ends it with the error, bookmarks are skipped.
func eachEvent[T any](ctx context.Context, w client.Watcher[T], f func(typ string, obj *T) error) error {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case api.Error:
				if ev.Status != nil {
					return fmt.Errorf("watch: %s", ev.Status.Message)
				}
				return errors.New("watch ended with an error")
			case api.Bookmark:
				continue
			}
			if ev.Object == nil {
				continue
			}
			if err := f(ev.Type, ev.Object); err != nil {
				return err
			}
		}
	}
}
