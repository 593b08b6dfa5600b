package jsonld

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/internal/jsonerr"
)

// Caps: a hostile block cannot make the walk unbounded.
const (
	MaxDepth = 64
	MaxNodes = 5000
)

// Node is one JSON object carrying @type.
type Node struct {
	Types []string
	Props map[string]any
}

// Str returns a string property (the first string of an array, or @id/@value of an object).
func (n Node) Str(key string) string {
	return str(n.Props[key])
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case []any:
		for _, e := range x {
			if s := str(e); s != "" {
				return s
			}
		}
	case map[string]any:
		if s, ok := x["@id"].(string); ok {
			return s
		}
		if s, ok := x["@value"].(string); ok {
			return s
		}
	}
	return ""
}

// Graph is the union of every node of every block.
type Graph struct {
	Blocks  int // blocks seen
	Parsed  int // blocks that parsed
	Nodes   []Node
	Errors  []string
	Clipped bool
}

// Parse reads each block (the text of a <script type="application/ld+json">).
func Parse(blocks []string) *Graph {
	g := &Graph{}
	for _, b := range blocks {
		g.Blocks++
		raw := bytes.TrimSpace([]byte(b))
		// Some CMSs wrap blocks in HTML comments or CDATA markers.
		raw = bytes.TrimPrefix(raw, []byte("<!--"))
		raw = bytes.TrimSuffix(raw, []byte("-->"))
		raw = bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("//<![CDATA["))
		raw = bytes.TrimSuffix(bytes.TrimSpace(raw), []byte("//]]>"))
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			if len(g.Errors) < 20 {
				g.Errors = append(g.Errors, fmt.Sprintf("block %d: %s", g.Blocks, jsonerr.Describe(raw, err)))
			}
			continue
		}
		g.Parsed++
		g.walk(v, 0)
	}
	return g
}

func (g *Graph) walk(v any, depth int) {
	if depth > MaxDepth || len(g.Nodes) >= MaxNodes {
		g.Clipped = true
		return
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			g.walk(e, depth+1)
		}
	case map[string]any:
		if t := types(x["@type"]); len(t) > 0 {
			g.Nodes = append(g.Nodes, Node{Types: t, Props: x})
		}
		for k, e := range x {
			if k == "@context" {
				continue
			}
			g.walk(e, depth+1)
		}
	}
}

func types(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, shortType(x))
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, shortType(s))
			}
		}
	}
	return out
}

// shortType turns "https://schema.org/Organization" or "schema:Organization" into "Organization".
func shortType(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "/#:"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// entityTypes are schema.org Organization, WebSite and LocalBusiness and their
// subtypes (schema.org type hierarchy, abridged to the types sites publish).
var entityTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(`Organization WebSite LocalBusiness
		Airline Consortium Corporation EducationalOrganization CollegeOrUniversity ElementarySchool HighSchool MiddleSchool Preschool School
		FundingScheme GovernmentOrganization LibrarySystem MedicalOrganization Dentist DiagnosticLab Hospital MedicalClinic Pharmacy Physician VeterinaryCare
		NGO NewsMediaOrganization OnlineBusiness OnlineStore PerformingGroup DanceGroup MusicGroup TheaterGroup PoliticalParty Project FundingAgency ResearchProject
		ResearchOrganization SearchRescueOrganization SportsOrganization SportsTeam WorkersUnion Cooperative
		AnimalShelter ArchiveOrganization AutomotiveBusiness AutoDealer AutoRepair ChildCare DryCleaningOrLaundry EmergencyService EmploymentAgency
		EntertainmentBusiness FinancialService BankOrCreditUnion InsuranceAgency FoodEstablishment Bakery BarOrPub Brewery CafeOrCoffeeShop Distillery
		FastFoodRestaurant IceCreamShop Restaurant Winery GovernmentOffice HealthAndBeautyBusiness HomeAndConstructionBusiness InternetCafe LegalService
		Attorney Notary Library LodgingBusiness Hotel Motel Resort BedAndBreakfast Hostel MedicalBusiness ProfessionalService RadioStation RealEstateAgent
		RecyclingCenter SelfStorage ShoppingCenter SportsActivityLocation Store BookStore ClothingStore ComputerStore ElectronicsStore Florist GroceryStore
		HardwareStore HobbyShop HomeGoodsStore JewelryStore MobilePhoneStore MovieRentalStore MusicStore OfficeEquipmentStore PetStore ShoeStore
		SportingGoodsStore TireShop ToyStore WholesaleStore TelevisionStation TouristInformationCenter TravelAgency`) {
		m[t] = true
	}
	return m
}()

// IsEntityType reports Organization, WebSite, LocalBusiness or one of their subtypes.
func IsEntityType(t string) bool { return entityTypes[t] }

// Entities returns the nodes whose type is an entity type.
func (g *Graph) Entities() []Node {
	var out []Node
	for _, n := range g.Nodes {
		for _, t := range n.Types {
			if IsEntityType(t) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}
