package data

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"strconv"

	"github.com/pkg/errors"
)

//go:embed iris.csv
var irisCSV []byte

// IrisClasses are the species of the iris data set, in label order.
var IrisClasses = [3]string{"setosa", "versicolor", "virginica"}

// Iris returns Fisher's iris data set (150 rows): 4 features per row (sepal length and width,
// petal length and width, in cm) and the species label 0–2 (see IrisClasses).
func Iris() (features [][4]float64, labels []int, err error) {
	rows, err := csv.NewReader(bytes.NewReader(irisCSV)).ReadAll()
	if err != nil {
		return nil, nil, errors.Wrap(err, "data: iris")
	}
	for i, r := range rows[1:] {
		if len(r) != 5 {
			return nil, nil, errors.Errorf("data: iris: row %d has %d fields, want 5", i+1, len(r))
		}
		var f [4]float64
		for k := 0; k < 4; k++ {
			if f[k], err = strconv.ParseFloat(r[k], 64); err != nil {
				return nil, nil, errors.Wrapf(err, "data: iris: row %d", i+1)
			}
		}
		lab := -1
		for c, name := range IrisClasses {
			if r[4] == name {
				lab = c
			}
		}
		if lab < 0 {
			return nil, nil, errors.Errorf("data: iris: row %d has unknown species %q", i+1, r[4])
		}
		features = append(features, f)
		labels = append(labels, lab)
	}
	return features, labels, nil
}
